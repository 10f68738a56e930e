// The common OBJ subset read in parallel chunks (obj_fast.cpp): v, vt, vn, faces of 3 to 256 corners
// in any of the forms v, v/vt, v//vn, v/vt/vn (relative indices too), usemtl, mtllib, o, g, s, comments,
// blank lines, LF or CR LF. The scene it makes is the general reader's (obj.cpp: the prescan and
// tinyobjloader) to the byte: the same numbers (tinyobjloader's own decimal conversion), the same
// triangles in the same order (its split of a quad along the shorter diagonal and its ear clipping of
// larger polygons, in float, the triangles that clipping drops dropped too), the same normals,
// texture coordinates and materials. It reports nothing: on anything else (a number in another form,
// an index past what is there, a line tinyobjloader would warn about, a limit) it gives up, and the
// general reader reads the file and says what it finds in its own words. Internal to the loader.
#pragma once

#include "sections.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sieve::render::detail {

// A usemtl or mtllib line, in file order.
struct obj_directive {
  bool mtllib = false;
  std::vector<std::string> names;  // mtllib's files, or usemtl's material
  std::size_t line = 0;            // counted from 1
  std::uint64_t triangle = 0;      // the triangles before it
};

struct obj_geometry {
  obj_mesh mesh;  // triangles, normals and uvs as the general reader makes them; material_of empty
  std::vector<obj_directive> directives;
};

// SIEVE_OBJ_READER=general: every OBJ read by the general reader alone (to measure the two readers
// against each other, and for tests). SIEVE_OBJ_CHUNK_BYTES: the chunk size (1 MiB; a test makes it
// small to put chunk boundaries everywhere).
bool obj_fast_enabled();
std::size_t obj_chunk_bytes();
// How many OBJ files the fast path has read in this process (counted by load_obj; for tests).
std::uint64_t obj_fast_reads();
void count_obj_fast_read();

// The geometry of `text` (a whole OBJ file), or nothing where the general reader must read it.
// Calls opt.admit with the triangle count before the arrays are made (a refusal: nothing).
std::optional<obj_geometry> read_obj_geometry(std::span<const unsigned char> text, const obj_options& opt);

}  // namespace sieve::render::detail
