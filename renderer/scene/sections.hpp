// The loader's parts, one file each: the sections of a scene file (camera.cpp, film.cpp,
// environment.cpp, materials.cpp, objects.cpp, lights.cpp, procedural_section.cpp), --set
// overrides (overrides.cpp), OBJ/MTL files (obj_prescan.cpp, obj.cpp), glTF files (gltf.hpp) and the bare-OBJ framing
// (framing.cpp); load.cpp runs them in order. Internal to the loader.
#pragma once

#include "image_file.hpp"
#include "toml_reader.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tinyobj {
struct material_t;
}

namespace sieve::render::detail {

// "key=value" applied to the document before it is read (load.hpp describes the forms).
void apply_override(toml::table& doc, const std::string& text, reader& rd);

// ------------------------------------------------------------------------------------------------
// Materials: one list for the scene, merged by name (materials.cpp).

struct registry {
  std::vector<material> list;
  std::vector<std::string> origin;  // where each came from, for conflict messages
  std::unordered_map<std::string, std::uint32_t> by_name;  // the first material of each name
  // The textures materials read (textures.cpp), each file once per wrap mode, within the limits.
  std::vector<texture> textures;
  std::map<std::pair<std::string, wrap_mode>, std::int32_t> texture_of;  // (path[ as opacity], wrap) -> index; -1: missing
  image_limits texture_limits;         // each image's
  std::uint64_t texture_budget = 0;    // bytes all textures may take stored, mipmaps included (scene_limits::max_texture_bytes)
  std::uint64_t texture_bytes = 0;     // taken so far
  std::vector<fs::path> texture_files;  // every texture file named (found or not): inputs of the scene

  std::optional<std::uint32_t> find(const std::string& name) const;
  // Appends `m` whatever its name (a light's or a procedural material); returns its index.
  std::uint32_t push(material m, std::string from);
  static bool same(const material& a, const material& b);
  // Adds `m`, or returns the material of that name when it is the same; a different material of the
  // same name is an error (names are how [[materials]] and `material =` refer to them).
  std::uint32_t add(const material& m, const std::string& from);
  std::uint32_t default_grey();
  // The index of the texture in `path` (read the first time it is asked for), or -1 where the file
  // is missing (a warning naming it and `who`, e.g. "scene.mtl: material 'brick'"). An unreadable
  // or corrupt image, one past the limits, or one past what is left of the budget is an error.
  std::int32_t texture_index(const fs::path& path, wrap_mode wrap, const std::string& who,
                             image_use use = image_use::color);
  // The same for an image already in memory (a glTF's), named `name`, its lookups multiplied by
  // `scale` (a glTF base colour factor); each (name, wrap, scale, use) decoded once. `use`
  // (core/texture_store.hpp) picks the channels kept and whether they are colour (sRGB decoded) or
  // numbers (a normal or metallic-roughness map: the stored values in 0 .. 1).
  std::int32_t texture_index(const std::string& name, const std::vector<unsigned char>& bytes, wrap_mode wrap,
                             vec3 scale, const std::string& who, image_use use = image_use::color);
  // An image made by the loader (a PLY's vertex colours), within the limits and the budget.
  std::int32_t texture_index(const std::string& name, const image_rgb& image, wrap_mode wrap, const std::string& who);
  // Decodes the image files the calls above asked for, each its own task (oneTBB), their pyramids
  // likewise; called once the scene's materials are known, before `textures` is read. The outcome
  // is the serial one's whatever the threads: each texture at the index texture_index returned, the
  // budget checked in that order (before any pyramid is allocated), the first failing image in that
  // order the one error reported.
  void decode_textures();

 private:
  // An image file asked for and not decoded yet: its texture's slot, how to read it, what it is for.
  struct pending_texture {
    std::int32_t index;
    std::string name, who;
    wrap_mode wrap;
    image_use use;
    vec3 scale;
    std::function<texel_image(const image_limits&)> read;
  };
  std::vector<pending_texture> pending;

  // Reserves the slot of a texture read through `read` (decoded by decode_textures) under `key`.
  std::int32_t add_texture(const std::string& key, const std::string& name, wrap_mode wrap, const std::string& who,
                           image_use use, vec3 scale, std::function<texel_image(const image_limits&)> read);
  std::int32_t keep(const std::string& key, texture t);
  std::string over_budget(const std::string& name, std::uint64_t bytes, const std::string& who) const;
};

// The MTL mapping of scene.hpp / scenes/README.md.
material map_mtl(const tinyobj::material_t& m, const std::string& from);
// What the present BSDFs approximate in `materials` ("3 with a glossy layer ... drawn as Lambert; ..."),
// empty where nothing is: the loader's one warning line per scene.
std::string approximations(const std::vector<material>& materials);

// A [[materials]] entry: read before the objects, applied after their MTL materials are known.
struct material_entry {
  std::string name;
  const toml::node* node;
  std::string key;
  std::optional<material_kind> kind;
  std::optional<vec3> albedo, emission;
  std::optional<float> ior, roughness, metallic, transmission;
  std::optional<bool> thin;
  std::optional<std::string> texture;  // the albedo texture's path as written, relative to the scene file
  wrap_mode wrap = wrap_mode::repeat;
  const toml::node* texture_node = nullptr;
};
std::vector<material_entry> read_material_entries(const toml::table& doc, const reader& rd);
// Overrides the MTL materials of the same name, or adds new ones.
// Textures named by entries are read relative to `base_dir` (the scene file's folder).
void apply_material_entries(const std::vector<material_entry>& entries, registry& reg, const fs::path& base_dir,
                            const reader& rd);

// ------------------------------------------------------------------------------------------------
// OBJ files (obj_prescan.cpp, obj.cpp).

// Faces with more vertices are refused before triangulation (tinyobjloader's ear clipping takes
// time quadratic in a face's vertex count).
constexpr std::size_t max_face_vertices = 256;

struct obj_options {
  bool strict = true;         // a missing MTL or an unknown usemtl is an error (TOML objects)
  bool use_materials = true;  // false: the object's `material =` replaces every face's
  std::string context;        // " (objects[0] in scene.toml)", appended to messages
  std::uint64_t max_triangles = std::numeric_limits<std::uint64_t>::max();  // room left in the scene
  std::string limit_text;     // how to name that limit in the message
  std::function<void(std::uint64_t)> admit;  // given the file's triangle count before it is parsed
};

std::vector<std::string_view> tokens(std::string_view line);
// `line` without its comment: from a '#' that starts a word (at the start or after a space or tab)
// to the end, as exporters write them after values ("Ka 0.63 0.065 0.05 # Red").
std::string_view uncommented(std::string_view line);
// `s` as a number, or nothing where it is not a number at all; `finite` says whether it is finite (as a float too).
std::optional<double> number_token(std::string_view s, bool& finite);

struct obj_scan {
  std::vector<std::pair<std::string, std::size_t>> mtllibs;  // the MTL files the OBJ names, with their lines
  std::uint64_t triangles = 0;                                // its faces' triangles
  std::string text;                                           // the file without comments, for tinyobjloader
};

// What tinyobjloader does not check (it reads "nan" as 0 and keeps triangles that index past the
// vertex list): every vertex coordinate a finite number, every face index inside the vertex list,
// no face past max_face_vertices, the triangles counted against the limit as they are read.
obj_scan prescan_obj(std::istream& in, const std::string& file, const obj_options& opt);

// What tinyobjloader does not check in an MTL file (it reads "nan" or a word as 0): every number a
// finite number; Kd, Ks, Tf, d, Tr, Pr and Pm in 0 .. 1 and Ke >= 0, named by the file, line and key.
// Returns the file without comments, for tinyobjloader.
std::string prescan_mtl(std::istream& in, const std::string& file, const std::string& context);

struct obj_mesh {
  std::vector<triangle> triangles;
  std::vector<std::uint32_t> material_of;  // into the registry; unset when !use_materials
  std::vector<triangle_normals> normals;   // empty (no face has vertex normals) or one per triangle
  std::vector<triangle_uvs> uvs;           // empty (no face has texture coordinates) or one per triangle
  std::vector<triangle_tangents> tangents;  // empty or one per triangle (glTF with normal maps)
  std::vector<fs::path> files;             // the OBJ and the MTL files found
};

obj_mesh load_obj(const fs::path& path, const obj_options& opt, registry& reg);
// A PLY file (ply.cpp): one material named after the file (grey, or its vertex colours as albedo).
obj_mesh load_ply(const fs::path& path, const obj_options& opt, registry& reg);

// ------------------------------------------------------------------------------------------------
// The scene file's sections, each adding to `sc`.

struct camera_given {
  bool position = false, look_at = false;  // the scene set them (the bare-OBJ framing keeps them)
  bool up = false, lens = false;           // up; vfov or focal_length_mm + film_height_mm (a bare glTF's camera yields to them)
};
camera_given read_camera(const toml::table& doc, const reader& rd, scene& sc);
// The camera's position, look_at and up make a view (checked after framing).
void check_camera(const toml::table& doc, const reader& rd, const scene& sc);
void read_film(const toml::table& doc, const reader& rd, scene& sc);
void fit_film(toml::table& doc, const reader& rd, const film_fit& fit);  // [film]'s size as fit gives it
void read_compaction(const toml::table& doc, const reader& rd, scene& sc);
void read_environment(const toml::table& doc, const reader& rd, scene& sc, const fs::path& base_dir);

// An object's `material =`: triangles [begin, end) take the material named, once all are known.
struct material_override {
  std::size_t begin, end;
  std::string material;
  const toml::node* node;
  std::string key;
};
// Objects are OBJ (`obj =`), PLY (`ply =`) or glTF (`gltf =`, scene/gltf.hpp) files. `bare_camera`: the camera of a
// bare glTF (model_entry), if the file has one.
std::vector<material_override> read_objects(const toml::table& doc, const reader& rd, scene& sc, registry& reg,
                                            const fs::path& base_dir, bool model_entry,
                                            std::optional<camera_desc>& bare_camera);
void apply_material_overrides(const std::vector<material_override>& overrides, const reader& rd,
                              const registry& reg, scene& sc);

void read_lights(const toml::table& doc, const reader& rd, scene& sc, registry& reg);
void read_procedural(const toml::table& doc, const reader& rd, scene& sc, registry& reg);

// A coarse occupancy grid over a box (cells of about 1/48 of its longest side): a cell is set when
// a triangle passes through it (each triangle sampled at half a cell's spacing, at most 64 x 64 points).
struct occupancy {
  aabb box;
  float cell = 1;
  int n[3] = {1, 1, 1};
  std::vector<std::uint8_t> set;

  bool inside(int i, int j, int k) const { return i >= 0 && j >= 0 && k >= 0 && i < n[0] && j < n[1] && k < n[2]; }
  bool at(int i, int j, int k) const { return set[(std::size_t(k) * n[1] + j) * n[0] + i] != 0; }
  vec3 centre(int i, int j, int k) const { return box.lo + vec3{i + 0.5f, j + 0.5f, k + 0.5f} * cell; }
};

// A bare model (OBJ, glTF or PLY alone): the scene's first `count` triangles, as the framing reads
// them: their box, worked out once, and their occupancy grid, made the first time it is asked for
// (each a pass over every triangle: a model's millions).
class bare_model {
 public:
  bare_model(const scene& sc, std::size_t count);
  const scene& sc;
  const std::size_t count;
  const aabb box;
  const occupancy& grid() const;

 private:
  mutable std::optional<occupancy> grid_;
};

// front_side: the side to see it from: 0 (+z, the front of glTF models and most OBJ exports), an
// open room's open side (1: -z, 2: +x, 3: -x): three of its four vertical sides covered by walls
// (`room` says whether it is one); `above` for a flat model in the xz plane (2 for one in the yz
// plane); `inside` for a model walled on all four sides (a building: inside_view).
constexpr int above = 4, inside = 5;
int front_side(const bare_model& model, bool& room);
// Its bounding box framed from `side` (0 .. 3, above), looking at its centre, the whole box in view.
void frame_bare_model(const reader& rd, camera_given given, scene& sc, const bare_model& model, int side);
// For a model walled on all four sides: a camera inside, at eye height (15 % of the box's height
// above the floor under its centre) in the free cell nearest the centre, near one end of the longer
// free line through it, looking along it. False when no free cell is enclosed.
bool inside_view(const bare_model& model, vec3& position, vec3& look_at);
// A quad light above, left of and before the model as the camera sees it (added after the camera).
void add_key_light(scene& sc, const bare_model& model);
void use_bare_camera(const camera_desc& camera, camera_given given, scene& sc);

}  // namespace sieve::render::detail
