// @file pbrt_loader_shapes.h: pbrt-v4's shapes as the renderer's triangles in world space: triangle, PLY and
// bilinear-patch meshes as they are, spheres and disks tessellated; each with its material, its area light's emission
// and its alpha cut-out, oriented as pbrt-v4 orients the surface normal (the side an area light emits to).
#pragma once
#include "pbrt_loader.h"
#include "pbrt_loader_materials.h"
#include "pbrt_loader_textures.h"

namespace tracer::pbrtload {

// Appends every shape of the scene, object instances flattened, to the Scene's triangle arrays and materials, and
// sets its bounds: the meshes in the order of FlattenShapes, then the spheres and disks in that order, each shape's
// triangles in its own order, numbered so (Scene::triangleNumbers, the dropped ones counted; a shape left out takes
// no numbers). Throws SceneError ("file:line: ...") for a mesh file that cannot be read.
void AddPbrtShapes(PbrtLoad& load, PbrtMaterials& materials, PbrtTextures& textures);

// Segments around a full circle for a tessellated sphere or disk of world radius `radius` in a scene whose bounding
// box has diagonal `sceneDiagonal`: enough that the chord's sagitta stays under 1e-4 of the diagonal (a fraction of
// a pixel for any view of the whole scene), between 8 and 512.
int CircleSegments(double radius, double sceneDiagonal);

}  // namespace tracer::pbrtload
