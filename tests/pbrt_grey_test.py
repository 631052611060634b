#!/usr/bin/env python3
# @file pbrt_grey_test.py: tests of pbrt-compare's grey copies of pbrt-v4 scenes (src/scripts/lib/pbrt_grey.py;
# CTest PbrtCompareGrey).
#
#   python3 tests/pbrt_grey_test.py
#
# A scene with one of each kind of colour (rgb and spectrum reflectances, named metal and glass spectra, copper by
# default, conductors by eta/k and by reflectance, a coated conductor, blackbody, named and rgb lights, TGA textures
# plain and run-length coded, inverted and scaled, an environment PFM, an Include with colours and one without, a
# spectrum file that cannot be made grey). Every grey value is checked against one computed here by hand to 1e-6,
# or, for the named metals, against the normal-incidence reflectances docs/FORMATS.md tables (to 1e-3, their
# rounding); every rgb of the result must be grey and everything else byte-identical. Exits 77 (CTest: skipped)
# when numpy is missing.
import os
import re
import struct
import sys
import tempfile

import pbrt_compare_test as t  # its checks, PFM writer and the path to src/scripts/lib

SCENE = '''Film "rgb" "integer xresolution" [16] "integer yresolution" [16]
WorldBegin
LightSource "infinite" "string filename" "sky.pfm" "float scale" 2
LightSource "distant" "blackbody L" [5500] "float scale" [3]
LightSource "point" "spectrum I" "stdillum-D65"
AttributeBegin
  AreaLightSource "diffuse" "rgb L" [4 2 1]
  Shape "sphere"
AttributeEnd
Texture "wood" "spectrum" "imagemap" "string filename" "tex/wood.tga" "float scale" 2
Texture "rle" "spectrum" "imagemap" "string filename" "tex/wood-rle.tga" "bool invert" true
Texture "bump" "float" "imagemap" "string filename" "tex/wood.tga"
Texture "check" "spectrum" "checkerboard" "rgb tex1" [1 0 0] "texture tex2" "wood"
Material "diffuse" "texture reflectance" "wood"
MakeNamedMaterial "silver" "string type" "conductor" "spectrum eta" "metal-Ag-eta" "spectrum k" "metal-Ag-k"
  "float roughness" 0.1
MakeNamedMaterial "copper" "string type" "conductor"
MakeNamedMaterial "gold" "string type" "conductor" "rgb eta" [0.2 0.5 1.4] "rgb k" [3 2.4 1.8]
MakeNamedMaterial "mirror" "string type" "conductor" "rgb reflectance" [0.9 0.8 0.7]
MakeNamedMaterial "glass" "string type" "dielectric" "spectrum eta" "glass-BK7"
MakeNamedMaterial "plastic" "string type" "coateddiffuse" "rgb reflectance" [1 0.378676 0.013473]
MakeNamedMaterial "measured" "string type" "diffuse" "spectrum reflectance" [400 0.2 500 0.4 600 0.6 700 0.8]
MakeNamedMaterial "fromfile" "string type" "diffuse" "spectrum reflectance" "refl.spd"
MakeNamedMaterial "coated" "string type" "coatedconductor" "spectrum conductor.eta" "metal-Au-eta"
  "spectrum conductor.k" "metal-Au-k" "spectrum interface.eta" "glass-F11"
Include "geometry/floor.pbrt"
Include "geometry/mesh.pbrt"
'''
FLOOR = 'Material "diffuse" "rgb reflectance" [0.5 0.4 0.3]\nShape "sphere"\n'
MESH = 'Shape "trianglemesh" "point3 P" [0 0 0 1 0 0 1 1 0] "integer indices" [0 1 2]\n'
# Two texels, (255, 0, 0) and (0, 128, 255); stored B, G, R, bottom row first in the plain file.
TEXELS = [(255, 0, 0), (0, 128, 255)]
SKY = [[(1.0, 2.0, 3.0), (0.5, 0.25, 0.0)], [(0.0, 0.0, 4.0), (2.0, 2.0, 2.0)]]  # 2x2, row 0 at the top


def lum(c):
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]


def srgb(v):
    x = v / 255.0
    return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4


def f0(eta, k):
    return [((n - 1) ** 2 + kk ** 2) / ((n + 1) ** 2 + kk ** 2) for n, kk in zip(eta, k)]


def write_tgas(folder):
    os.makedirs(folder)
    bgr = b"".join(bytes((b, g, r)) for r, g, b in TEXELS)
    head = struct.pack("<BBBHHBHHHHBB", 0, 0, 2, 0, 0, 0, 0, 0, 2, 1, 24, 0)
    open(os.path.join(folder, "wood.tga"), "wb").write(head + bgr)
    # run-length coded, top-left origin: one raw packet of two pixels
    head = struct.pack("<BBBHHBHHHHBB", 0, 0, 10, 0, 0, 0, 0, 0, 2, 1, 24, 0x20)
    open(os.path.join(folder, "wood-rle.tga"), "wb").write(head + b"\x01" + bgr)


def grey_value(text, decl):
    """The values of the parameter decl ("rgb reflectance") in text, or None."""
    m = re.search(re.escape(f'"{decl}"') + r"\s*\[([^\]]*)\]", text)
    return [float(v) for v in m.group(1).split()] if m else None


def directive(text, marker):
    """The text of the directive that holds marker, to the next directive."""
    start = text.index(marker)
    end = re.search(r"\n(?=[A-Z])", text[start:])
    return text[start:start + end.start()] if end else text[start:]


def expect_grey(text, marker, decl, y, what, tol=1e-6):
    v = grey_value(directive(text, marker), decl)
    t.check(v is not None and len(v) == 3 and all(abs(x - y) <= tol for x in v),
            f"{what}: \"{decl}\" {v} is grey {y:.6f}")


def expect_float(text, marker, decl, y, what):
    v = grey_value(directive(text, marker), decl)
    t.check(v is not None and len(v) == 1 and abs(v[0] - y) <= 1e-6, f"{what}: \"{decl}\" {v} is {y}")


def check_textures(text):
    lin = [[srgb(c) for c in texel] for texel in TEXELS]
    expect_grey(text, 'Texture "wood"', "rgb value", sum(lum([2 * c for c in x]) for x in lin) / 2,
                "an imagemap TGA (sRGB), scale 2: the mean luminance of its decoded texels")
    t.check('Texture "wood" "spectrum" "constant"' in text, "the imagemap became a constant texture")
    expect_grey(text, 'Texture "rle"', "rgb value", sum(lum([1 - c for c in x]) for x in lin) / 2,
                "a run-length coded TGA, inverted")
    t.check('Texture "bump" "float" "imagemap" "string filename" "tex/wood.tga"' in text,
            "a float texture is left as it is")
    expect_grey(text, 'Texture "check"', "rgb tex1", 0.2126, "a checkerboard's rgb tex1")
    t.check('"texture tex2" "wood"' in text, "a texture reference is left as it is")


def check_materials(text):
    expect_grey(text, '"silver"', "rgb reflectance", lum([0.968, 0.955, 0.931]),
                "silver (metal-Ag-eta/k): the luminance of the tabled normal-incidence reflectance", 1e-3)
    t.check('"float roughness" 0.1' in directive(text, '"silver"') and "spectrum" not in directive(text, '"silver"'),
            "silver keeps its roughness and loses its spectra")
    expect_grey(text, '"copper"', "rgb reflectance", lum([0.924, 0.610, 0.567]),
                "a conductor without eta/k: pbrt-v4's copper", 1e-3)
    expect_grey(text, '"gold"', "rgb reflectance", lum(f0([0.2, 0.5, 1.4], [3, 2.4, 1.8])),
                "a conductor of rgb eta and k")
    t.check('"rgb eta"' not in text and '"rgb k"' not in text, "no eta or k left on conductors")
    expect_grey(text, '"mirror"', "rgb reflectance", lum([0.9, 0.8, 0.7]), "a conductor's rgb reflectance")
    expect_float(text, '"glass"', "float eta", 1.5195, "glass-BK7: its index at 532 nm")
    expect_grey(text, '"plastic"', "rgb reflectance", lum([1, 0.378676, 0.013473]), "coateddiffuse's reflectance")
    expect_grey(text, '"measured"', "rgb reflectance", lum([0.66, 0.464, 0.33]),
                "(wavelength, value) pairs: the luminance of the values at 630, 532 and 465 nm")
    t.check('"spectrum reflectance" "refl.spd"' in text, "a spectrum file is kept")
    expect_grey(text, '"coated"', "rgb conductor.reflectance", lum([0.932, 0.769, 0.387]),
                "coatedconductor: its conductor's metal-Au as a grey reflectance", 1e-3)
    expect_float(text, '"coated"', "float interface.eta", 1.7948, "coatedconductor: glass-F11 at 532 nm")


def check_lights(tmp, text):
    import numpy as np
    import images
    expect_grey(text, '"distant"', "rgb L", 1.0, "a blackbody L: white of luminance 1, as pbrt-v4 normalises it")
    t.check('"float scale" [3]' in directive(text, '"distant"'), "the light's scale is kept")
    expect_grey(text, '"point"', "rgb I", 1.0, "a named illuminant: white")
    expect_grey(text, "AreaLightSource", "rgb L", lum([4, 2, 1]), "an area light's rgb L")
    t.check('"string filename" [ "sky.grey.pfm" ]' in directive(text, '"infinite"'),
            "the environment image is replaced by its grey copy")
    sky = images.read_pfm(os.path.join(tmp, "sky.grey.pfm")) if os.path.isfile(os.path.join(tmp, "sky.grey.pfm")) \
        else None
    want = np.array([[[lum(c)] * 3 for c in row] for row in SKY])
    t.check(sky is not None and sky.shape == want.shape and np.allclose(sky, want, rtol=1e-6, atol=0),
            "the grey sky holds each texel's luminance in every channel, rows in their place")


def test_grey(tmp):
    import images
    import pbrt_grey
    write_tgas(os.path.join(tmp, "tex"))
    os.makedirs(os.path.join(tmp, "geometry"))
    open(os.path.join(tmp, "geometry", "floor.pbrt"), "w").write(FLOOR)
    open(os.path.join(tmp, "geometry", "mesh.pbrt"), "w").write(MESH)
    t.write_pfm(os.path.join(tmp, "sky.pfm"), SKY, 2, 2)
    scene = os.path.join(tmp, "scene.pbrt")
    open(scene, "w").write(SCENE)
    t.check(images.read_tga(os.path.join(tmp, "tex", "wood.tga")).tolist() ==
            images.read_tga(os.path.join(tmp, "tex", "wood-rle.tga")).tolist(),
            "the plain and the run-length coded TGA (other origins) read the same")
    path, notes = pbrt_grey.write_grey_scene(scene)
    t.check(path == os.path.join(tmp, "scene.grey.pbrt"), f"the grey copy is written beside the scene: {path}")
    text = open(path).read()
    check_textures(text)
    check_materials(text)
    check_lights(tmp, text)
    rgbs = re.findall(r'"rgb [^"]*"\s*\[([^\]]*)\]', text)
    t.check(rgbs and all(len(set(v.split())) == 1 for v in rgbs), f"every one of the {len(rgbs)} rgb values is grey")
    line = SCENE[:SCENE.index("refl.spd")].count("\n") + 1
    t.check(len(notes) == 1 and f"scene.pbrt:{line}: kept in colour" in notes[0] and "refl.spd" in notes[0],
            f"one note, naming the spectrum file's line {line}: {notes}")
    t.check('Include "geometry/floor.grey.pbrt"' in text and 'Include "geometry/mesh.pbrt"' in text,
            "an Include with colours points at its grey copy, one without stays")
    floor = open(os.path.join(tmp, "geometry", "floor.grey.pbrt")).read()
    t.check(floor == FLOOR.replace("[0.5 0.4 0.3]", "[ %.6g %.6g %.6g ]" % ((lum([0.5, 0.4, 0.3]),) * 3)),
            "the included file's grey copy: its reflectance grey, the rest byte-identical")
    t.check(not os.path.exists(os.path.join(tmp, "geometry", "mesh.grey.pbrt")), "no copy of a file without colours")
    untouched = [ln for ln in SCENE.splitlines() if ln.startswith(("Film", "WorldBegin", "  Shape", "AttributeEnd"))]
    t.check(all(ln in text.splitlines() for ln in untouched), "directives without colours are byte-identical")
    open(scene, "w").write(SCENE.replace('[4 2 1]', '[4 2]'))
    _, notes = pbrt_grey.write_grey_scene(scene)
    line = SCENE[:SCENE.index("[4 2 1]")].count("\n") + 1
    t.check(any(f"scene.pbrt:{line}:" in n and "not three numbers" in n for n in notes),
            f"an rgb of two numbers: kept, noted at line {line}")


def main():
    try:
        import numpy  # noqa: F401
    except ImportError:
        print(f"skipped: numpy is not installed for {sys.executable} (apt-get install python3-numpy)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        test_grey(tmp)
    print(f"{len(t.FAILED)} failed" if t.FAILED else "all passed")
    sys.exit(1 if t.FAILED else 0)


if __name__ == "__main__":
    main()
