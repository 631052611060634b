# @file pbrt_settings.py: reads the render settings of a pbrt-v4 scene file (Film resolution, Sampler pixelsamples,
# Integrator maxdepth, with pbrt-v4's defaults) from the directives before WorldBegin, following Include and Import,
# and writes the main file's text with other values, for the scripts that drive pbrt-v4 and the tracer on one file.
# Standard library only.
import gzip
import os
import re

DEFAULTS = {"width": 1280, "height": 720, "spp": 16, "max_depth": 5}  # pbrt-v4's, as the tracer's loader uses
TOKEN = re.compile(rb'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|\[|\]|[^\s"\[\]#]+')


class SettingsError(Exception):
    """A scene whose settings cannot be read or rewritten; the message names the file and line."""


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SettingsError(f"{path}: cannot read ({e.strerror})") from None
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def tokens(data, path):
    """(token bytes, start offset, end offset) of each token; whitespace and comments are dropped."""
    pos = 0
    while pos < len(data):
        m = TOKEN.match(data, pos)
        if not m:
            line = data.count(b"\n", 0, pos) + 1
            raise SettingsError(f"{path}:{line}: unterminated string")
        if not m.group().isspace() and not m.group().startswith(b"#"):
            yield m.group(), m.start(), m.end()
        pos = m.end()


def parameters(toks, i, path, data):
    """The parameter list from toks[i]: ({name: (type, [values], start, end)}, index after it)."""
    params = {}
    while i < len(toks) and toks[i][0].startswith(b'"'):
        decl, start = toks[i][0][1:-1].split(), toks[i][1]
        if len(decl) != 2:
            line = data.count(b"\n", 0, start) + 1
            raise SettingsError(f"{path}:{line}: parameter {toks[i][0].decode(errors='replace')} is not \"type name\"")
        i += 1
        values = []
        if i < len(toks) and toks[i][0] == b"[":
            i += 1
            while i < len(toks) and toks[i][0] != b"]":
                values.append(toks[i][0])
                i += 1
        elif i < len(toks):
            values.append(toks[i][0])
        end = toks[min(i, len(toks) - 1)][2]
        params[decl[1].decode()] = (decl[0].decode(), values, start, end)
        i += 1
    return params, i


def directives(path, root_dir, found, depth=0):
    """Fills found[name] = (file, type, params, start, end) for Film, Sampler and Integrator before WorldBegin.
    Returns True once WorldBegin was seen. Include and Import paths are relative to root_dir (pbrt-v4's search
    folder, the main file's)."""
    if depth > 32:
        raise SettingsError(f"{path}: Include nested more than 32 deep")
    data = read_text(path)
    toks = list(tokens(data, path))
    i = 0
    while i < len(toks):
        word = toks[i][0]
        if word == b"WorldBegin":
            found["_world"] = (path, toks[i][1])
            return True
        if word in (b"Film", b"Sampler", b"Integrator") and i + 1 < len(toks) and toks[i + 1][0].startswith(b'"'):
            params, j = parameters(toks, i + 2, path, data)
            found[word.decode()] = (path, toks[i + 1][0][1:-1].decode(), params, toks[i][1], toks[j - 1][2])
            i = j
            continue
        if word in (b"Include", b"Import") and i + 1 < len(toks) and toks[i + 1][0].startswith(b'"'):
            name = toks[i + 1][0][1:-1].decode()
            if directives(os.path.join(root_dir, name), root_dir, found, depth + 1):
                return True
            i += 2
            continue
        i += 1
    return False


def integer(found, directive, name, default):
    entry = found.get(directive)
    if not entry or name not in entry[2]:
        return default
    kind, values, start, _ = entry[2][name]
    try:
        if kind != "integer" or len(values) != 1:
            raise ValueError
        return int(values[0])
    except ValueError:
        data = read_text(entry[0])
        line = data.count(b"\n", 0, start) + 1
        raise SettingsError(f"{entry[0]}:{line}: {directive} \"{name}\" is not one integer") from None


def read_settings(path):
    """{"width", "height", "spp", "max_depth", "integrator", "film", "from_file": [names the file sets]}."""
    found = {}
    directives(path, os.path.dirname(os.path.abspath(path)), found)
    film = found.get("Film")
    if film:
        for crop in ("cropwindow", "pixelbounds"):
            if crop in film[2]:
                raise SettingsError(f"{film[0]}: Film \"{crop}\" renders part of the image; the comparison needs "
                                    "the whole image (remove it)")
    s = {
        "width": integer(found, "Film", "xresolution", DEFAULTS["width"]),
        "height": integer(found, "Film", "yresolution", DEFAULTS["height"]),
        "spp": integer(found, "Sampler", "pixelsamples", DEFAULTS["spp"]),
        "max_depth": integer(found, "Integrator", "maxdepth", DEFAULTS["max_depth"]),
        "film": film[1] if film else "rgb",
        "integrator": found["Integrator"][1] if "Integrator" in found else "volpath",
    }
    s["_found"] = found
    return s


def with_settings(path, settings, width, height, max_depth):
    """The main file's text with Film's resolution and Integrator's maxdepth set (added where absent). Raises
    SettingsError when the directive to change sits in an Included file or the file has no WorldBegin."""
    found = settings["_found"]
    data = read_text(path)
    edits = []  # (start, end, replacement bytes)
    for directive, kind, values in (("Film", "rgb", {"xresolution": width, "yresolution": height}),
                                    ("Integrator", "volpath", {"maxdepth": max_depth})):
        text = b"".join(b' "integer %s" [ %d ]' % (k.encode(), v) for k, v in values.items())
        entry = found.get(directive)
        if entry is None:
            if "_world" not in found or found["_world"][0] != path:
                raise SettingsError(f"{path}: no WorldBegin in this file, so no {directive} can be added before it")
            edits.append((found["_world"][1], found["_world"][1], b'%s "%s"%s\n' % (directive.encode(),
                                                                                  kind.encode(), text)))
            continue
        if entry[0] != path:
            raise SettingsError(f"{entry[0]}: {directive} is in an Included file; change it there or render at "
                                "the file's own settings")
        for name in values:
            if name in entry[2]:
                edits.append((entry[2][name][2], entry[2][name][3], b""))
        # after the directive's type string, which ends where the first parameter (or the directive) begins
        after_type = data.index(b'"', data.index(b'"', entry[3]) + 1) + 1
        edits.append((after_type, after_type, text))
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        data = data[:start] + new + data[end:]
    return data
