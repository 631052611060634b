// @file pbrt_loader_lights.h: pbrt-v4's LightSource directives: an "infinite" light becomes the Scene's environment
// (a constant colour, or its equal-area image turned into a lat-long map); "point", "spot" and "distant" lights the
// Scene's delta lights (core/delta_lights.h); the other kinds ("goniometric", "projection") are not rendered yet and
// are warned once per kind. Area lights are the shapes' business (pbrt_loader_shapes.h).
#pragma once
#include "pbrt_loader.h"

namespace tracer::pbrtload {

// Sets Scene::environment from the first "infinite" light and Scene::deltaLights from the point, spot and distant
// lights (in pbrt's world: LoadPbrtScene mirrors them with the rest when it mirrors the scene), and warns about every
// light left out.
void AddPbrtLights(PbrtLoad& load);

}  // namespace tracer::pbrtload
