# @file pbrt_grey.py: writes a grey copy of a pbrt-v4 scene: every colour of its materials, spectrum textures, lights
# and media replaced by its luminance, so that pbrt-v4 (spectral) and the tracer (RGB) render it without the spectral
# upsampling of colours telling them apart; what still differs is a difference of model. Needs numpy (images.py).
#
#   grey_path, notes = pbrt_grey.write_grey_scene("scene.pbrt")   # writes scene.grey.pbrt beside it
#
# What becomes what (luminance: Rec. 709 weights, the comparison's):
# - an `rgb` value: its luminance in all three channels (a grey RGB is a flat spectrum in pbrt-v4, exactly);
# - a `spectrum`: a named illuminant or a `blackbody` of a light: white, "rgb [1 1 1]" (pbrt-v4 normalises each to
#   luminance 1 as it does an RGB illuminant); numbers (wavelength, value pairs): the luminance of the values at 630,
#   532 and 465 nm (where the tracer samples spectra for R, G and B); a dielectric's or a coat's `eta`: one float,
#   its value at 532 nm (no dispersion);
# - a conductor's `eta` and `k` (rgb or named metal spectra, copper by default): a grey `reflectance`, the luminance
#   of the normal-incidence Fresnel reflectance of eta + i k per channel (both renderers map `reflectance` r to eta
#   1, k = 2 sqrt(r / (1 - r)), whose normal-incidence reflectance is r);
# - a spectrum `imagemap` texture: a `constant` texture of the mean luminance of its decoded texels (times `scale`,
#   after `invert`). The pattern is dropped, not kept as a grey image: a constant also takes texture filtering and
#   image orientation out of the comparison, and the colour scene still compares those;
# - an image of a light (`infinite` or area `filename`): a grey copy (its luminance per texel) beside it as PFM,
#   whose direction-dependence matters to the lighting.
# What cannot be made grey (a spectrum file, a textured eta or k, an image this module cannot read) is kept as it is
# and listed in the notes with its file and line. Included files with something to change get grey copies too
# (NAME.grey.pbrt beside them); the others are included as they are.
import os

import numpy as np

import images
from pbrt_settings import SettingsError, parameters, read_text, tokens

WAVELENGTHS = (630.0, 532.0, 465.0)
# pbrt-v4's named spectra (util/spectrum.cpp) at those wavelengths, as docs/FORMATS.md tables them: (eta, k) of metals.
METALS = {
    "Ag": ((0.1342, 0.1297, 0.1395), (3.9628, 3.1942, 2.6135)),
    "Al": ((1.3571, 0.8843, 0.6605), (7.5878, 6.4700, 5.6536)),
    "Au": ((0.1837, 0.4573, 1.3724), (3.0663, 2.4084, 1.8250)),
    "Cu": ((0.2459, 1.0723, 1.1569), (3.3784, 2.5907, 2.4572)),
    "CuZn": ((0.4450, 0.5682, 0.9470), (3.5220, 2.5880, 1.9200)),
    "MgO": ((1.7348, 1.7422, 1.7502), (0.0, 0.0, 0.0)),
    "TiO2": ((2.8750, 2.9685, 3.1176), (0.0, 0.0, 0.0)),
}
GLASS_532 = {"glass-BK7": 1.5195, "glass-BAF10": 1.6748, "glass-FK51A": 1.4885, "glass-LASF9": 1.8590,
             "glass-F5": 1.6796, "glass-F10": 1.7367, "glass-F11": 1.7948}
ETA_PARAMS = ("eta", "interface.eta")  # indices of refraction: one float in the grey scene
COLOUR_DIRECTIVES = (b"Material", b"MakeNamedMaterial", b"Texture", b"LightSource", b"AreaLightSource",
                     b"MakeNamedMedium", b"Attribute")


def luminance(rgb):
    return sum(w * c for w, c in zip(images.LUMINANCE_WEIGHTS, rgb))


def number(x):
    return b"%.6g" % x


def grey_text(name, y):
    return b'"rgb %s" [ %s %s %s ]' % (name.encode(), number(y), number(y), number(y))


def unquote(tok):
    return tok[1:-1].decode(errors="replace") if tok.startswith(b'"') else tok.decode(errors="replace")


class Kept(Exception):
    """A value that stays as it is in the grey scene; the message says why (for the notes)."""


def numbers(values, what):
    try:
        return [float(v) for v in values]
    except ValueError:
        raise Kept(f"{what}: not numbers") from None


def sampled(values, what):
    """(R, G, B) of a spectrum of (wavelength, value) pairs, linearly interpolated at WAVELENGTHS."""
    v = numbers(values, what)
    if len(v) < 2 or len(v) % 2:
        raise Kept(f"{what}: not (wavelength, value) pairs")
    lam, val = v[0::2], v[1::2]
    return tuple(float(np.interp(w, lam, val)) for w in WAVELENGTHS)


def metal(name, what):
    """(eta, k) RGB of a named metal spectrum ("metal-Ag-eta" gives Ag's eta and k both)."""
    parts = name.split("-")
    if len(parts) != 3 or parts[0] != "metal" or parts[1] not in METALS:
        raise Kept(f"{what}: spectrum \"{name}\" is not a named metal")
    return METALS[parts[1]]


class GreyWriter:
    """Rewrites one scene (and its Includes) into grey copies; notes lists what stayed in colour."""

    def __init__(self, main_path):
        self.root = os.path.dirname(os.path.abspath(main_path))  # pbrt-v4 resolves names against the main folder
        self.notes = []
        self.images = {}  # light image path -> its grey copy's name as written in the scene

    # --- one parameter -------------------------------------------------------------------------------------------
    def colour(self, name, param, light):
        """The grey replacement of one colour parameter (rgb, spectrum, blackbody), or None: not a colour."""
        kind, values = param[0], param[1]
        what = f"\"{kind} {name}\""
        if kind == "rgb":
            v = numbers(values, what)
            if len(v) != 3:
                raise Kept(f"{what}: not three numbers")
            return v[1] if name in ETA_PARAMS else luminance(v)
        if kind == "blackbody":
            if not light:
                raise Kept(f"{what}: a blackbody outside a light")
            return 1.0
        if kind != "spectrum":
            return None
        if len(values) == 1 and values[0].startswith(b'"'):
            named = unquote(values[0])
            if name in ETA_PARAMS and named in GLASS_532:
                return GLASS_532[named]
            if light and (named.startswith("stdillum-") or named.startswith("illum-")):
                return 1.0  # pbrt-v4 divides a light's spectrum by its own luminance: white of luminance 1
            raise Kept(f"{what}: spectrum \"{named}\" has no grey equivalent here")
        rgb = sampled(values, what)
        return rgb[1] if name in ETA_PARAMS else luminance(rgb)

    def grey_params(self, params, light, skip=()):
        """Edits turning each colour parameter grey; an eta becomes "float"."""
        edits = []
        for name, param in params.items():
            if name in skip:
                continue
            try:
                y = self.colour(name, param, light)
            except Kept as e:
                self.note(param[2], str(e))
                continue
            if y is None:
                continue
            text = b'"float %s" [ %s ]' % (name.encode(), number(y)) if name in ETA_PARAMS else grey_text(name, y)
            edits.append((param[2], param[3], text))
        return edits

    def conductor_rgb(self, params, name, default):
        param = params.get(name)
        if param is None:
            return default
        kind, values = param[0], param[1]
        if kind == "rgb" and len(values) == 3:
            return tuple(numbers(values, f"\"rgb {name}\""))
        if kind == "float" and len(values) == 1:
            return tuple(numbers(values, f"\"float {name}\"")) * 3
        if kind == "spectrum" and len(values) == 1 and values[0].startswith(b'"'):
            pair = metal(unquote(values[0]), f"\"spectrum {name}\"")
            return pair[0] if name.endswith("eta") else pair[1]
        if kind == "spectrum":
            return sampled(values, f"\"spectrum {name}\"")
        raise Kept(f"\"{kind} {name}\": a conductor's {name} that is not an rgb or a spectrum")

    def conductor(self, params, prefix, after_type):
        """A conductor's eta and k as a grey reflectance; the other colour parameters as any material's."""
        eta_name, k_name, refl = prefix + "eta", prefix + "k", prefix + "reflectance"
        if refl in params:
            return self.grey_params(params, False)
        try:
            eta = self.conductor_rgb(params, eta_name, METALS["Cu"][0])  # pbrt-v4's default: copper
            k = self.conductor_rgb(params, k_name, METALS["Cu"][1])
        except Kept as e:
            self.note(params.get(eta_name, params.get(k_name))[2], str(e))
            return self.grey_params(params, False, skip=(eta_name, k_name))
        f0 = [((n - 1) ** 2 + kk * kk) / ((n + 1) ** 2 + kk * kk) for n, kk in zip(eta, k)]
        edits = self.grey_params(params, False, skip=(eta_name, k_name))
        present = [params[n] for n in (eta_name, k_name) if n in params]
        text = grey_text(refl, luminance(f0))
        if not present:
            return edits + [(after_type, after_type, b" " + text)]
        edits.append((present[0][2], present[0][3], text))
        return edits + [(p[2], p[3], b"") for p in present[1:]]

    # --- directives ----------------------------------------------------------------------------------------------
    def image_mean(self, params):
        """The mean luminance of an imagemap's decoded texels, times scale, after invert."""
        param = params.get("filename")
        if param is None or not param[1]:
            raise Kept("imagemap without \"filename\"")
        name = unquote(param[1][0])
        path = os.path.join(self.root, name)
        lower = name.lower()
        try:
            if lower.endswith(".tga"):  # pbrt-v4 reads TGA (stb_image) as sRGB whatever "encoding" says
                rgb = srgb_to_linear(images.read_tga(path))
            elif lower.endswith(".pfm") or lower.endswith(".exr"):
                rgb = images.read_image(path)
            else:
                raise Kept(f"imagemap \"{name}\": only TGA, PFM and EXR images are averaged here")
        except (images.ImageError, OSError) as e:
            raise Kept(f"imagemap \"{name}\": {getattr(e, 'strerror', None) or e}") from None
        scale = float(params["scale"][1][0]) if "scale" in params else 1.0
        invert = "invert" in params and params["invert"][1][:1] == [b"true"]
        rgb = rgb * scale
        rgb = np.maximum(1.0 - rgb if invert else rgb, 0.0)
        return float(np.mean(images.luminance(rgb)))

    def light_image(self, param):
        """The name of a grey PFM copy of a light's image (luminance per texel), written beside it once."""
        name = unquote(param[1][0])
        if name not in self.images:
            path = os.path.join(self.root, name)
            try:
                img = images.read_image(path)
            except (images.ImageError, OSError) as e:
                raise Kept(f"light image \"{name}\": {getattr(e, 'strerror', None) or e}") from None
            stem = os.path.splitext(name)[0]
            images.write_pfm(os.path.join(self.root, stem + ".grey.pfm"),
                             np.repeat(images.luminance(img)[..., None], 3, axis=2))
            self.images[name] = stem + ".grey.pfm"
        return b'"string filename" [ "%s" ]' % self.images[name].encode()

    def directive(self, word, toks, i, data):
        """(edits, index after the directive) for one directive whose colours turn grey."""
        names = 3 if word == b"Texture" else 1  # the quoted strings before the parameter list
        if any(not t[0].startswith(b'"') for t in toks[i + 1:i + 1 + names]) or i + names >= len(toks):
            return [], i + 1
        params, j = parameters(toks, i + 1 + names, self.path, data)
        head = [unquote(t[0]) for t in toks[i + 1:i + 1 + names]]
        after_type = toks[i + names][2]
        if word == b"Texture":
            if head[1] != "spectrum":
                return [], j
            if head[2] == "imagemap":
                try:
                    y = self.image_mean(params)
                except Kept as e:
                    self.note(toks[i][1], str(e))
                    return [], j
                text = b'Texture "%s" "spectrum" "constant" %s' % (head[0].encode(), grey_text("value", y))
                return [(toks[i][1], toks[j - 1][2], text)], j
            return self.grey_params(params, False), j
        light = word in (b"LightSource", b"AreaLightSource") or head[0] == "light"
        mtype = head[0] if word == b"Material" else unquote(params["type"][1][0]) if "type" in params else ""
        if word in (b"Material", b"MakeNamedMaterial") and mtype in ("conductor", "coatedconductor"):
            return self.conductor(params, "" if mtype == "conductor" else "conductor.", after_type), j
        edits = self.grey_params(params, light, skip=("filename",))
        if light and "filename" in params:
            try:
                edits.append((params["filename"][2], params["filename"][3], self.light_image(params["filename"])))
            except Kept as e:
                self.note(params["filename"][2], str(e))
        return edits, j

    def note(self, offset, why):
        line = self.data.count(b"\n", 0, offset) + 1
        self.notes.append(f"{self.path}:{line}: kept in colour: {why}")

    # --- files ---------------------------------------------------------------------------------------------------
    def rewrite(self, path, depth=0):
        """The grey text of one file, or None where nothing in it (or its Includes) changes."""
        if depth > 32:
            raise SettingsError(f"{path}: Include nested more than 32 deep")
        data = read_text(path)
        toks = list(tokens(data, path))
        saved = getattr(self, "path", None), getattr(self, "data", None)
        self.path, self.data = path, data
        edits, i = [], 0
        while i < len(toks):
            word = toks[i][0]
            if word in COLOUR_DIRECTIVES:
                more, i = self.directive(word, toks, i, data)
                edits += more
                continue
            if word in (b"Include", b"Import") and i + 1 < len(toks) and toks[i + 1][0].startswith(b'"'):
                name = unquote(toks[i + 1][0])
                grey = self.rewrite(os.path.join(self.root, name), depth + 1)
                if grey is not None:
                    new = grey_name(name)
                    with open(os.path.join(self.root, new), "wb") as f:
                        f.write(grey)
                    edits.append((toks[i + 1][1], toks[i + 1][2], b'"%s"' % new.encode()))
                self.path, self.data = path, data
                i += 2
                continue
            i += 1
        self.path, self.data = saved
        for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
            data = data[:start] + new + data[end:]
        return data if edits else None


def srgb_to_linear(x):
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


def grey_name(name):
    """scene.pbrt -> scene.grey.pbrt (a .gz copy is written uncompressed)."""
    stem = name[:-3] if name.lower().endswith(".gz") else name
    stem = stem[:-5] if stem.lower().endswith(".pbrt") else stem
    return stem + ".grey.pbrt"


def write_grey_scene(path):
    """Writes the grey copy of the scene at path beside it; returns (its path, notes on what stayed in colour)."""
    writer = GreyWriter(path)
    grey = writer.rewrite(path)
    out = os.path.join(os.path.dirname(os.path.abspath(path)), grey_name(os.path.basename(path)))
    with open(out, "wb") as f:
        f.write(grey if grey is not None else read_text(path))
    return out, writer.notes
