// tinygltf's implementation, compiled once, here, with the system's nlohmann/json.hpp (Debian's
// libtinygltf-dev header includes it by that name). tinygltf decodes no image (no stb_image in it):
// renderer/scene/gltf.cpp installs a callback that keeps each image's encoded bytes, and the
// texture reader decodes them. Everything tinygltf reads from disk goes through gltf.cpp's file
// callbacks (regular files only, sizes bounded).
#define TINYGLTF_IMPLEMENTATION
#define TINYGLTF_NO_STB_IMAGE
#define TINYGLTF_NO_STB_IMAGE_WRITE
#include <tiny_gltf.h>
