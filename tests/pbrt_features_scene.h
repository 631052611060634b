// @file pbrt_features_scene.h: a small pbrt-v4 scene for the tests that run every feature on that format (a room
// lit by a quad area light, a rough copper sphere, 32x24 at 4 spp by the file), written into a test's folder.
#pragma once
#include <fstream>
#include <string>

namespace tracer::test {

// The lines before a pbrt-v4 test scene's world: camera, film, sampler and integrator, then WorldBegin.
inline std::string PbrtHeader(const std::string& lookAt, int fov, int width, int height, const std::string& filename,
                              int spp, int maxDepth) {
  return "LookAt " + lookAt + "\nCamera \"perspective\" \"float fov\" [" + std::to_string(fov) +
         "]\nFilm \"rgb\" \"integer xresolution\" [" + std::to_string(width) + "] \"integer yresolution\" [" +
         std::to_string(height) + "] \"string filename\" \"" + filename +
         "\"\nSampler \"independent\" \"integer pixelsamples\" [" + std::to_string(spp) +
         "]\nIntegrator \"path\" \"integer maxdepth\" [" + std::to_string(maxDepth) + "]\nWorldBegin\n";
}

inline std::string WritePbrtFeaturesScene(const std::string& dir) {
  const std::string path = dir + "/room.pbrt";
  std::ofstream f(path);
  f << PbrtHeader("0 1 4  0 1 0  0 1 0", 45, 32, 24, "room.pfm", 4, 4)
    << "AttributeBegin\n"
       "  AreaLightSource \"diffuse\" \"rgb L\" [4 4 4]\n"
       "  Shape \"trianglemesh\" \"point3 P\" [-0.5 1.99 -0.5  0.5 1.99 -0.5  0.5 1.99 0.5  -0.5 1.99 0.5]\n"
       "    \"integer indices\" [0 2 1 0 3 2]\n"
       "AttributeEnd\n"
       "Material \"diffuse\" \"rgb reflectance\" [0.6 0.5 0.4]\n"
       "Shape \"trianglemesh\" \"point3 P\" [-1 0 -1  1 0 -1  1 0 1  -1 0 1  -1 2 -1  1 2 -1  1 2 1  -1 2 1]\n"
       "  \"integer indices\" [0 1 2 0 2 3  4 6 5 4 7 6  0 4 5 0 5 1  0 3 7 0 7 4  1 5 6 1 6 2]\n"
       "AttributeBegin\n"
       "  Material \"conductor\" \"spectrum eta\" \"metal-Cu-eta\" \"spectrum k\" \"metal-Cu-k\" \"float roughness\" "
       "[0.2]\n"
       "  Translate 0 0.5 0\n"
       "  Shape \"sphere\" \"float radius\" [0.4]\n"
       "AttributeEnd\n";
  return path;
}

}  // namespace tracer::test
