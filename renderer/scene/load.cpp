// The scene loader: TOML scene files (toml++), OBJ/MTL meshes (tinyobjloader) and glTF (gltf.hpp). Schema and mapping:
// scenes/README.md. Each section of a scene file is read by a file of its own (sections.hpp).
#include "load.hpp"

#include "sections.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace sieve::render {
namespace detail {
namespace {

// Only the materials some triangle uses, in their order; then the emissive triangles.
void keep_used_materials(registry& reg, scene& sc) {
  std::vector<std::uint32_t> remap(reg.list.size(), ~0u);
  for (std::uint32_t m : sc.material_of) remap[m] = 0;
  for (std::size_t i = 0; i < reg.list.size(); ++i) {
    if (remap[i] == 0) {
      remap[i] = static_cast<std::uint32_t>(sc.materials.size());
      sc.materials.push_back(std::move(reg.list[i]));
    }
  }
  for (auto& m : sc.material_of) m = remap[m];
  for (std::size_t i = 0; i < sc.triangles.size(); ++i) {
    if (max_component(sc.materials[sc.material_of[i]].emission) > 0)
      sc.emissive.push_back(static_cast<std::uint32_t>(i));
  }
}

// What a bare model is given where the file has none: a camera, and a grey sky with a key light
// (`lit`: the environment was left to the loader and the model has no lights of its own).
void dress_bare_model(const reader& rd, camera_given given, const std::optional<camera_desc>& camera, bool lit,
                      scene& sc, std::size_t count) {
  std::string added;
  bool room = false, seen_inside = false;
  const bare_model model(sc, count);
  const int side = front_side(model, room);
  if (camera) {
    use_bare_camera(*camera, given, sc);
    // Its aspect ratio, at the film's height, unless the film's size was given.
    if (camera->aspect > 0 && !rd.overridden.count("film.width") && !rd.overridden.count("film.height")) {
      const double w = std::round(sc.film.height * double(camera->aspect));
      sc.film.width = static_cast<std::uint32_t>(std::clamp(w, 1.0, 16384.0));
    }
  } else if (side == inside) {
    vec3 position, look_at;
    if (inside_view(model, position, look_at)) {
      if (!given.position) sc.camera.position = position;
      if (!given.look_at) sc.camera.look_at = look_at;
      seen_inside = true;
      if (!given.position)
        added = "a camera inside it (walled on every side, it hides its inside from any view outside), at " + str(position) +
                " looking towards " + str(look_at);
    } else {
      frame_bare_model(rd, given, sc, model, 0);
      if (!given.position)
        added = "a camera framing it from +z (its front), though it is walled on every side: what is inside stays hidden; "
                "place the camera inside it with camera.position and camera.look_at";
    }
  } else {
    frame_bare_model(rd, given, sc, model, side);
    static const char* names[] = {"+z", "-z", "+x", "-x", "above"};
    if (!given.position)
      added = std::string("a camera framing it from ") + names[side] +
              (room ? " (its open side)" : side == above ? " at an angle (it is flat)" : side == 2 ? " (it is flat across x)" : " (its front)");
  }
  // An open room with lights of its own (a Cornell box) is lit by them alone; anything else gets
  // the grey sky and a key light, its own emitters (a glTF's emissive parts) kept besides.
  // Seen from inside: a brighter sky, whose light comes in through the model's openings (a key light
  // outside its walls would light nothing the camera sees).
  if (lit && seen_inside) {
    sc.environment = {2.5f, 2.5f, 2.5f};
    added += ", a bright grey sky (lighting it through its openings)";
  } else if (lit && !(room && !sc.emissive.empty())) {
    add_key_light(sc, model);
    added += std::string(added.empty() ? "" : ", ") + "a grey sky and a key light";
  } else if (lit) {
    sc.environment = {0, 0, 0};
  }
  if (!added.empty()) {
    print_warning(rd.file + ": added " + added +
                  " (override with --set camera.position=[x,y,z], camera.look_at=..., environment.color=[r,g,b] or "
                  "environment.map=sky.exr, which also drop the key light; or write a TOML scene)");
  }
}

scene read(const toml::table& doc, reader& rd, const fs::path& base_dir, bool model_entry,
           std::string default_name, bool default_environment) {
  scene sc;
  rd.known_keys(doc, "", top_keys, "the scene file");

  sc.name = std::move(default_name);
  if (const toml::node* n = doc.get("name")) sc.name = rd.string(*n, "name");
  sc.name = printable(sc.name);  // printed on the terminal: no control character of the file's reaches it

  const camera_given given = read_camera(doc, rd, sc);
  read_film(doc, rd, sc);
  read_environment(doc, rd, sc, base_dir);
  read_compaction(doc, rd, sc);

  const toml::array* objects = array_of_tables(doc, "objects", rd);
  array_of_tables(doc, "materials", rd);
  const toml::array* lights = array_of_tables(doc, "lights", rd);
  if ((!objects || objects->empty()) && (!lights || lights->empty()) && !doc.get("procedural")) {
    fail(rd.file + ": nothing to render: the scene has no [[objects]], [[lights]] or [procedural]");
  }

  const std::vector<material_entry> entries = read_material_entries(doc, rd);
  registry reg;
  reg.texture_limits.max_side = rd.limits.max_texture_side;
  // Each image within the decoder's own limits (its side, its file's size); all of them together,
  // stored with their mipmaps, within the budget (checked on each image's stored size before its
  // pyramid is allocated: textures.cpp).
  reg.texture_budget = rd.limits.max_texture_bytes;
  std::optional<camera_desc> bare_camera;
  const std::vector<material_override> overrides = read_objects(doc, rd, sc, reg, base_dir, model_entry, bare_camera);
  apply_material_entries(entries, reg, base_dir, rd);
  apply_material_overrides(overrides, rd, reg, sc);
  read_lights(doc, rd, sc, reg);
  read_procedural(doc, rd, sc, reg);
  reg.decode_textures();  // every image file the materials named, decoded together

  if (sc.triangles.empty()) fail(rd.file + ": the scene has no triangles");
  rd.check_triangles(sc.triangles.size(), "in all");
  keep_used_materials(reg, sc);
  if (const std::string a = approximations(sc.materials); !a.empty())
    print_warning(rd.file + ": materials the renderer approximates (Lambert, mirror and glass only): " + a);
  // Attributes cover every triangle once any has them (lights and procedural geometry: flat, no uvs).
  if (!sc.normals.empty()) sc.normals.resize(sc.triangles.size(), triangle_normals{});
  if (!sc.uvs.empty()) sc.uvs.resize(sc.triangles.size(), triangle_uvs{});
  if (!sc.tangents.empty()) sc.tangents.resize(sc.triangles.size(), triangle_tangents{});
  sc.textures = std::move(reg.textures);
  sc.files.insert(sc.files.end(), reg.texture_files.begin(), reg.texture_files.end());
  if (model_entry) dress_bare_model(rd, given, bare_camera, default_environment, sc, sc.triangles.size());
  if (!model_entry && sc.emissive.empty() && sc.environment_map.texels.empty() && max_component(sc.environment) <= 0)
    print_warning(rd.file + ": the scene has no light (no emissive material, [[lights]] or [environment]): it renders black");
  check_camera(doc, rd, sc);
  return sc;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace
}  // namespace detail

void check_scene_file(const std::filesystem::path& path) {
  using namespace detail;
  const std::string file = path.string();
  if (!file_exists(path)) fail(file + ": scene file not found");
  const std::string ext = lower(path.extension().string());
  if (ext != ".toml" && ext != ".obj" && ext != ".gltf" && ext != ".glb" && ext != ".ply")
    fail(file + ": unknown scene file type " + in_quotes(path.extension().string()) +
         " (expected .toml, .obj, .gltf, .glb or .ply)");
  input_file(path, "scene file");  // refuses what is not a regular file before anything else
}

scene load_scene(const std::filesystem::path& path, const std::vector<std::string>& overrides,
                 const scene_limits& limits, const film_fit& fit) {
  using namespace detail;
  reader rd;
  rd.file = path.string();
  rd.limits = limits;
  check_scene_file(path);

  const std::string ext = lower(path.extension().string());
  toml::table doc;
  bool model_entry = false;
  if (ext == ".toml") {
    try {
      const std::vector<unsigned char> bytes = input_file(path, "scene file").bytes(max_scene_file_bytes);
      const std::string text(bytes.begin(), bytes.end());
      doc = toml::parse(std::string_view(text), rd.file);
    } catch (const toml::parse_error& e) {
      fail(rd.file + ":" + std::to_string(e.source().begin.line) + ":" +
           std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
    }
  } else {  // .obj, .gltf, .glb, .ply (check_scene_file)
    model_entry = true;
    toml::table object;
    object.insert(ext == ".obj" ? "obj" : ext == ".ply" ? "ply" : "gltf", path.filename().string());
    doc.insert("objects", toml::array{std::move(object)});
  }

  for (const auto& o : overrides) apply_override(doc, o, rd);
  if (fit) fit_film(doc, rd, fit);
  // A bare model's sky, unless the overrides gave one: grey, neutral, dim enough for the key light to shape it.
  const bool default_environment = model_entry && !doc.get("environment");
  if (default_environment) doc.insert("environment", toml::table{{"color", toml::array{0.35, 0.35, 0.35}}});
  scene sc = read(doc, rd, path.parent_path(), model_entry, path.stem().string(), default_environment);
  if (!model_entry) sc.files.insert(sc.files.begin(), path);  // a bare model (OBJ, PLY, glTF) is listed as the object
  return sc;
}

std::uint64_t input_bytes(const scene& s) {
  std::uint64_t sum = 0;
  for (const auto& f : s.files) {
    std::error_code ec;
    const auto n = std::filesystem::file_size(f, ec);
    if (!ec) sum += n;
  }
  return sum;
}

}  // namespace sieve::render
