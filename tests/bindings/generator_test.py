"""capi/bindings: the header reader and the emitters, on small headers written here. What the
headers use is read as C means it; anything else is refused naming the file and the
declaration, so a header change the bindings cannot follow stops the generator. Run by CTest
(bindings:generator)."""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "capi" / "bindings"))

from c_header import (Callback, CType, Enum, External, HeaderError, Opaque,  # noqa: E402
                      Struct, read_abi)
from conventions import capability_of, check_conventions  # noqa: E402
from generate import layout, py_type, python, rust, rust_type, stubs  # noqa: E402
import collectives  # noqa: E402
import enums  # noqa: E402
import options  # noqa: E402
import results  # noqa: E402

PREAMBLE = """#ifndef NUBO_H
#define NUBO_H
#include <stdint.h>
#include "nubo/version.h"
#ifdef __cplusplus
extern "C" {
#endif
#define NUBO_C_API
"""
EPILOGUE = """
#ifdef __cplusplus
}
#endif
#endif
"""


def read(body: str, extra: dict[str, str] = {}):  # noqa: B006 - read-only
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "include" / "nubo").mkdir(parents=True)
        (root / "include" / "nubo" / "version.h").write_text("#define NUBO_ABI_VERSION 7\n")
        (root / "capi").mkdir()
        (root / "capi" / "nubo.h").write_text(PREAMBLE + body + EPILOGUE)
        for name, text in extra.items():
            (root / "capi" / name).write_text(text)
        return read_abi(root / "capi", root / "include")


class ReaderTest(unittest.TestCase):
    def test_every_construct_the_headers_use(self) -> None:
        abi = read("""
/* a comment; with a semicolon */
typedef enum nubo_color { NUBO_RED = 0, NUBO_BLUE = 0x10, NUBO_COLOR_MAX_ENUM = 0x7fffffff }
    nubo_color;
typedef struct nubo_thing nubo_thing; /* opaque */
struct DLManagedTensor;
typedef struct nubo_opts {
  uint32_t struct_size;
  const char* const* names; // several
  nubo_color a, b;
  unsigned bits;
  double* out;
} nubo_opts;
typedef int (*nubo_cb)(const nubo_opts* opts, void* user);
NUBO_C_API nubo_color nubo_paint(nubo_thing* thing, const char* name, char* buf,
                                 struct DLManagedTensor** tensor, nubo_cb cb);
NUBO_C_API void nubo_nothing(void);
#include "nubo_more.h"
""", {"nubo_more.h": '#include "nubo.h"\nNUBO_C_API uint64_t nubo_more(size_t n);\n'})
        self.assertEqual(abi.abi_version, 7)
        kinds = [type(d) for d in abi.order]
        self.assertEqual(kinds, [Enum, Opaque, External, Struct, Callback])
        self.assertEqual(abi.enums[0].constants, [("NUBO_RED", 0), ("NUBO_BLUE", 16)])
        opts = abi.structs[0]
        self.assertTrue(opts.sized)
        self.assertEqual([f.name for f in opts.fields],
                         ["struct_size", "names", "a", "b", "bits", "out"])
        self.assertEqual(opts.fields[1].type, CType("char", True, (True, False)))
        self.assertEqual(opts.fields[4].type, CType("unsigned"))
        self.assertEqual([f.name for f in abi.functions], ["nubo_paint", "nubo_nothing",
                                                          "nubo_more"])
        paint = abi.functions[0]
        types = [py_type(p.type, abi, "test", True) for p in paint.parameters]
        self.assertEqual(types, ["POINTER(nubo_thing)", "c_char_p", "c_void_p",
                                 "POINTER(c_void_p)", "nubo_cb"])
        self.assertEqual(rust_type(opts.fields[1].type, abi, "test"), "*const *const c_char")
        self.assertEqual(rust_type(paint.parameters[2].type, abi, "test"), "*mut c_char")
        # Both emitters take all of it.
        self.assertIn("class nubo_opts(Sized):", python(abi))
        self.assertIn('"nubo_more": (c_uint64, [c_size_t]),', python(abi))
        self.assertIn("pub fn nubo_paint(", rust(abi))
        self.assertIn("NUBO_BLUE: nubo_color = 16;", rust(abi))

    def test_what_it_cannot_mirror_is_refused_naming_it(self) -> None:
        cases = [
            ("typedef union nubo_u { int a; float b; } nubo_u;", "nubo_u"),
            ("typedef enum nubo_e { NUBO_A, NUBO_B = 1 } nubo_e;", "explicit value"),
            ("typedef struct nubo_s { uint32_t struct_size; int x[4]; } nubo_s;", "nubo_s"),
            ("NUBO_C_API int nubo_f(int);", "nubo_f"),
            ("int stray = 3;", "stray"),
        ]
        for body, named in cases:
            with self.subTest(body), self.assertRaises(HeaderError) as e:
                abi = read(body)
                python(abi)
            self.assertIn(named, str(e.exception))
            self.assertIn("nubo.h", str(e.exception))

    def test_an_array_of_numbers_with_a_defined_length(self) -> None:
        abi = read("""
#define NUBO_SLOTS 8
typedef struct nubo_device_counts_info { uint32_t struct_size; uint64_t n[NUBO_SLOTS]; }
    nubo_device_counts_info;
""")
        field = abi.structs[0].fields[1]
        self.assertEqual(field.type.array, ("NUBO_SLOTS", 8))
        self.assertIn("NUBO_SLOTS = 8", python(abi))
        self.assertIn('("n", (c_uint64 * NUBO_SLOTS)),', python(abi))
        self.assertIn("pub const NUBO_SLOTS: usize = 8;", rust(abi))
        self.assertIn("pub n: [u64; NUBO_SLOTS],", rust(abi))
        self.assertIn("CONST(NUBO_SLOTS);", layout(abi))
        for body in ["typedef struct nubo_s { uint64_t n[NUBO_NOT_DEFINED]; } nubo_s;",
                     "#define NUBO_K 2\ntypedef struct nubo_s { char* n[NUBO_K]; } nubo_s;"]:
            with self.subTest(body), self.assertRaises(HeaderError) as e:
                read(body)
            self.assertIn("#define'd NUBO_ constant", str(e.exception))


RESULT = """
#define NUBO_CODEC_SLOTS 8
/* What a run did (C++: nubo::ns::RunSummary). Set struct_size = sizeof before the call. */
typedef struct nubo_run_summary {
  uint32_t struct_size;
  uint64_t files, bytes; /* the files' sizes */
  /* Seconds the run waited on the network, which this comment says at some length so that it
   * wraps in both languages' docs. */
  double wait_seconds;
  int resumed; /* nonzero: an interrupted attempt was continued */
  int retries;
  uint64_t by_codec[NUBO_CODEC_SLOTS];
} nubo_run_summary;
/* The same, under an older name (C++: nubo::ns::RunSummary). */
typedef struct nubo_old_run_summary { uint32_t struct_size; uint64_t files; } nubo_old_run_summary;
/* Options (not a result: no C++ type named). */
typedef struct nubo_run_options { uint32_t struct_size; int level; } nubo_run_options;
"""


class ResultsTest(unittest.TestCase):
    def test_the_comments_are_read_with_the_struct(self) -> None:
        abi = read(RESULT)
        run = abi.structs[0]
        self.assertEqual(run.cpp, "nubo::ns::RunSummary")
        self.assertEqual(run.doc, "What a run did.")  # the marker and struct_size gone
        self.assertEqual(run.field_docs["bytes"], "the files' sizes")
        self.assertEqual(run.field_docs["files"], "the files' sizes")  # the whole declaration's
        self.assertTrue(run.field_docs["wait_seconds"].startswith("Seconds the run waited"))
        self.assertTrue(run.field_docs["wait_seconds"].endswith("docs."))
        self.assertIsNone(abi.structs[2].cpp)
        self.assertEqual([s.name for s in results.results(abi)],
                         ["nubo_run_summary", "nubo_old_run_summary"])

    def test_cpp_assigns_every_field_from_its_namesake(self) -> None:
        text = results.cpp(read(RESULT))
        self.assertIn("inline nubo_run_summary to_nubo_run_summary(const nubo::ns::RunSummary& in)",
                      text)
        for name in ["files", "bytes", "wait_seconds", "resumed", "retries", "by_codec"]:
            self.assertIn(f"assign(out.{name}, in.{name});", text)
        self.assertNotIn("assign(out.struct_size", text)
        self.assertIn("to_nubo_old_run_summary(const nubo::ns::RunSummary& in)", text)
        self.assertNotIn("nubo_run_options", text)

    def test_python_dataclass_with_flags_counts_and_docs(self) -> None:
        text = results.python(read(RESULT))
        self.assertIn('class RunSummary:\n    """What a run did. (C: nubo_run_summary)"""', text)
        self.assertIn("    resumed: bool\n    \"\"\"True: an interrupted attempt was continued.", text)
        self.assertIn("    retries: int\n", text)
        self.assertIn("    wait_seconds: float\n", text)
        self.assertIn("by_codec: dict[Codec, int]", text)
        self.assertIn("resumed=bool(c.resumed)", text)
        self.assertIn("by_codec=chunk_counts(c.by_codec)", text)
        self.assertEqual(text.count("class RunSummary"), 1)  # the alias shares it
        self.assertTrue(all(len(line) <= 100 for line in text.splitlines()))
        namespace: dict = {}
        # noqa below: the test runs the module it generated, on purpose.
        exec(compile(text.replace("from ._abi", "# ").replace("from ._codecs", "# ")  # noqa: S102
                     .replace("from ._enums", "# "),
                     "results", "exec"), {"Codec": int, "chunk_counts": list}, namespace)

    def test_rust_owned_struct_and_its_from(self) -> None:
        text = results.rust(read(RESULT))
        self.assertIn("pub struct RunSummary {", text)
        self.assertIn("    /// True: an interrupted attempt was continued.\n    pub resumed: bool,",
                      text)
        self.assertIn("pub retries: i32,", text)
        self.assertIn("pub by_codec: ChunkCounts,", text)
        self.assertIn("impl From<&ffi::nubo_run_summary> for RunSummary {", text)
        self.assertIn("resumed: c.resumed != 0,", text)
        self.assertNotIn("nubo_old_run_summary", text)
        self.assertTrue(all(len(line) <= 100 for line in text.splitlines()))

    def test_a_result_it_cannot_convert_is_refused_naming_it(self) -> None:
        cases = [
            ("/* (C++: nubo::A) */ typedef struct nubo_a_summary { uint32_t struct_size; "
             "char* name; } nubo_a_summary;", "nubo_a_summary.name"),
            ("typedef enum nubo_e { NUBO_E_A = 0 } nubo_e;\n/* (C++: nubo::A) */ typedef struct "
             "nubo_a_summary { uint32_t struct_size; nubo_e e; } nubo_a_summary;",
             "nubo_e needs its (C++: ...)"),
            ("/* (C++: nubo::A) */ typedef struct nubo_a_summary { uint64_t n; } nubo_a_summary;",
             "must begin with struct_size"),
            ("#define NUBO_K 2\n/* (C++: nubo::A) */ typedef struct nubo_a_summary { "
             "uint32_t struct_size; uint64_t n[NUBO_K]; } nubo_a_summary;", "array of NUBO_K"),
        ]
        for body, named in cases:
            with self.subTest(body), self.assertRaises(HeaderError) as e:
                results.cpp(read(body))
            self.assertIn(named, str(e.exception))


INFO = """
/* How it is paid for (C++: nubo::ns::Pricing). */
typedef enum nubo_pricing {
  NUBO_PRICING_ON_DEMAND = 0,
  NUBO_PRICING_SPOT = 1 /* interrupted (C++: preemptible) */
} nubo_pricing;
/* One option (C++: nubo::ns::Estimate). */
typedef struct nubo_estimate_info {
  uint32_t struct_size;
  const char* label;    /* "p4d x2" (C++: label()) */
  nubo_pricing pricing;
  double total_s;       /* the sum of the parts (C++: time.total_s()) */
  double spot;          /* $/h; < 0: none */
  double reserved;      /* $/h; <= 0: none */
  const char* status;   /* (C++: nubo::ns::status_name(in.status)) */
  const char* notes;    /* the assumptions, one per line */
  const char* tags;     /* key=value, one per line */
} nubo_estimate_info;
"""


class InfoTest(unittest.TestCase):
    def test_cpp_reads_each_field_from_its_expression_and_keeps_made_text(self) -> None:
        abi = read(INFO)
        info = abi.structs[0]
        self.assertEqual(info.field_docs["total_s"], "the sum of the parts")  # the marker gone
        text = results.cpp(abi)
        self.assertIn("to_nubo_estimate_info(const nubo::ns::Estimate& in, Texts& texts)", text)
        self.assertIn("assign_text(out.label, in.label(), texts);", text)
        self.assertIn("assign(out.total_s, in.time.total_s());", text)
        self.assertIn("assign(out.pricing, in.pricing);", text)
        self.assertIn("assign_text(out.status, nubo::ns::status_name(in.status), texts);", text)
        self.assertIn("assign_text(out.notes, in.notes, texts);", text)
        # The C enum is the C++ one, value for value, each C++ name its suffix unless it says.
        self.assertIn("static_assert(static_cast<int>(nubo::ns::Pricing::on_demand) == "
                      "NUBO_PRICING_ON_DEMAND);", text)
        self.assertIn("static_assert(static_cast<int>(nubo::ns::Pricing::preemptible) == "
                      "NUBO_PRICING_SPOT);", text)
        self.assertEqual(abi.enums[0].value_docs["NUBO_PRICING_SPOT"], "interrupted")

    def test_python_reads_text_lines_maps_enums_and_optional_numbers(self) -> None:
        text = results.python(read(INFO))
        for line in ["label: str", "pricing: Pricing", "spot: Optional[float]",
                     "notes: tuple[str, ...]", "tags: dict[str, str]", "label=text(c.label)",
                     "pricing=Pricing(c.pricing)", "spot=None if c.spot < 0 else c.spot",
                     "reserved=None if c.reserved <= 0 else c.reserved", "notes=lines(c.notes)",
                     "tags=pairs(c.tags)", "from ._enums import Pricing",
                     "from ._lib import lines, pairs, text"]:
            self.assertIn(line, text)

    def test_rust_copies_text_out_and_refuses_an_enum_it_does_not_know(self) -> None:
        text = results.rust(read(INFO))
        for line in ["pub label: String,", "pub pricing: crate::enums::Pricing,",
                     "pub spot: Option<f64>,", "pub notes: Vec<String>,",
                     "pub tags: std::collections::BTreeMap<String, String>,",
                     "pub(crate) unsafe fn from_c(c: &ffi::nubo_estimate_info)",
                     "label: owned(c.label),", "spot: (c.spot >= 0.0).then_some(c.spot),",
                     "reserved: (c.reserved > 0.0).then_some(c.reserved),",
                     'known(crate::enums::Pricing::from_raw(c.pricing), "nubo_estimate_info.pricing"',
                     "notes: owned_lines(c.notes),", "tags: owned_pairs(c.tags),"]:
            self.assertIn(line, text)
        self.assertNotIn("Copy", text.split("pub struct Estimate")[0].splitlines()[-1])


COLLECTIVES = """
typedef struct nubo_worker nubo_worker;
typedef struct nubo_buffer nubo_buffer;
typedef struct nubo_pending nubo_pending;
typedef enum nubo_reduce_op { NUBO_REDUCE_SUM = 0 } nubo_reduce_op;
typedef enum nubo_status { NUBO_OK = 0 } nubo_status;
nubo_status nubo_worker_scatter(nubo_worker* worker, const nubo_buffer* in, nubo_buffer* out,
                                nubo_reduce_op op, int root);
nubo_status nubo_worker_scatter_async(nubo_worker* worker, const nubo_buffer* in,
                                      nubo_buffer* out, nubo_reduce_op op, int root,
                                      nubo_pending** out_pending);
nubo_status nubo_worker_fill(nubo_worker* worker, nubo_buffer* x);
"""


class CollectivesTest(unittest.TestCase):
    def test_a_worker_function_with_an_async_twin_gets_every_entry_point(self) -> None:
        abi = read(COLLECTIVES)
        self.assertEqual([c.name for c in collectives.collectives(abi)], ["scatter"])
        text = collectives.cpp(abi)
        self.assertIn('require_worker(worker).scatter(require_buffer(in, "in"), '
                      'require_buffer(out, "out"), to_op(op), root);', text)
        self.assertIn('give(require_worker(worker).scatter_async(require_buffer(in, "in"), '
                      'require_buffer(out, "out"), to_op(op), root), out_pending);', text)
        self.assertNotIn("nubo_worker_fill", text)  # no async twin: not a collective
        py = collectives.python(abi)
        self.assertIn('def scatter(self, inp: Any, out: Any, op: Any = "sum", root: int = 0)', py)
        self.assertIn("lambda h0, h1, p: c.nubo_worker_scatter_async(self._handle, h0, h1, op_, "
                      "root, p)", py)
        rs = collectives.rust(abi)
        self.assertIn("pub fn scatter(&self, input: &Buffer, out: &mut Buffer, op: ReduceOp, "
                      "root: i32)", rs)
        self.assertIn("input: &'b Buffer, out: &'b mut Buffer", rs)

    def test_an_async_twin_that_differs_is_refused(self) -> None:
        body = COLLECTIVES.replace("nubo_reduce_op op, int root,\n", "int root,\n")
        with self.assertRaises(HeaderError) as e:
            collectives.collectives(read(body))
        self.assertIn("nubo_worker_scatter_async", str(e.exception))


OPTIONS = """
typedef struct nubo_transfer_progress { uint32_t struct_size; uint64_t bytes_done; }
    nubo_transfer_progress;
typedef int (*nubo_transfer_progress_callback)(const nubo_transfer_progress* p, void* user);
/* (C++: nubo::ns::Extra) */
typedef struct nubo_extra_options { uint32_t struct_size; const char* profile; }
    nubo_extra_options;
/* Options of a run (C++: nubo::ns::RunOptions). */
typedef struct nubo_run_options {
  uint32_t struct_size;
  int level;
  int sync; /* nonzero (default): fdatasync */
  const char* const* exclude;
  size_t exclude_count;
  nubo_transfer_progress_callback progress;
  void* progress_user;
  const char* key_file;
  const nubo_extra_options* extra;
} nubo_run_options;
int nubo_extra_options_init(nubo_extra_options* options, size_t size);
int nubo_run_options_init(nubo_run_options* options, size_t size);
"""


class OptionsTest(unittest.TestCase):
    def test_both_ways_by_field_name_with_pairs_and_extensions(self) -> None:
        text = options.cpp(read(OPTIONS))
        self.assertIn("inline nubo_run_options to_nubo_run_options(const nubo::ns::RunOptions& in)",
                      text)
        self.assertIn("  assign(out.level, in.level);", text)
        self.assertIn('  assign_empty(in.exclude, "nubo::ns::RunOptions::exclude");', text)
        self.assertNotIn("exclude_count, in", text)  # the list's count is the list's
        self.assertIn('  take(out.sync, in.sync, what + "->sync");', text)
        self.assertIn("  out.exclude = to_strings(in.exclude, in.exclude_count, "
                      '(what + "->exclude").c_str());', text)
        self.assertIn("  out.progress = wrap_progress(in.progress, in.progress_user);", text)
        self.assertIn('  take(out.key_file, in.key_file, what + "->key_file");', text)
        self.assertIn("if (in.extra != nullptr) {", text)
        self.assertIn("from_nubo_extra_options(read_sized(*in.extra, defaults, "
                      '(what + "->extra").c_str(), "nubo_extra_options_init()"), '
                      'what + "->extra")', text)
        # The extension first, as the C compiler meets it; then the entry points' helpers.
        self.assertLess(text.index("from_nubo_extra_options("),
                        text.index("from_nubo_run_options("))
        self.assertIn("inline void init_options(nubo_run_options* out, std::size_t size)", text)
        self.assertIn("inline nubo::ns::RunOptions read_options(const nubo_run_options* in, const char* what",
                      text)
        self.assertNotIn("to_nubo_run_options", results.cpp(read(OPTIONS)))  # not a result

    def test_rust_owned_options_with_their_fill(self) -> None:
        text = options.rust(read(OPTIONS))
        self.assertIn("pub struct RunOptions {", text)
        self.assertIn("    pub level: Option<i32>,", text)
        self.assertIn("    /// True (default): fdatasync.\n    pub sync: Option<bool>,", text)
        self.assertIn("    pub exclude: Vec<String>,", text)
        self.assertNotIn("exclude_count:", text)
        self.assertNotIn("progress", text.split("impl RunOptions")[0])  # an argument in Rust
        self.assertIn("    pub key_file: Option<PathBuf>,", text)
        self.assertIn("    pub profile: Option<String>,", text)  # not a path by its name
        self.assertIn("    pub extra: Extra,", text)
        self.assertIn("o.sync = c_int::from(v);", text)
        self.assertIn('(o.exclude, o.exclude_count) = keep.strings("exclude", &self.exclude)?;',
                      text)
        self.assertIn("o.extra = keep.extension(extra);", text)
        self.assertIn("check(unsafe { ffi::nubo_run_options_init(&mut o, "
                      "std::mem::size_of_val(&o)) })?;", text)

    def test_what_it_cannot_pair_or_convert_is_refused_naming_it(self) -> None:
        cases = [
            ("/* (C++: nubo::A) */ typedef struct nubo_a_options { uint32_t struct_size; "
             "const char* const* names; } nubo_a_options;", "names_count"),
            ("typedef int (*nubo_a_callback)(void* user);\n/* (C++: nubo::A) */ typedef struct "
             "nubo_a_options { uint32_t struct_size; nubo_a_callback cb; void* cb_user; } "
             "nubo_a_options;", "_CALLBACKS"),
            ("/* (C++: nubo::A) */ typedef struct nubo_a_options { uint32_t struct_size; "
             "double* out; } nubo_a_options;", "nubo_a_options.out"),
            ("/* (C++: nubo::A) */ typedef struct nubo_a_options { int level; } nubo_a_options;",
             "must begin with struct_size"),
        ]
        init = "\nint nubo_a_options_init(nubo_a_options* o, size_t size);"  # what makes an input
        for body, named in cases:
            with self.subTest(body), self.assertRaises(HeaderError) as e:
                options.cpp(read(body + init))
            self.assertIn(named, str(e.exception))


class EnumsTest(unittest.TestCase):
    BODY = """
/* How a thing is stored (C++: nubo::ns::Storage). */
typedef enum nubo_storage {
  NUBO_STORAGE_RAW = 0, /* as it is */
  /* squeezed by the best codec there is, which this comment says at a length that wraps in
   * both languages' docs */
  NUBO_STORAGE_SQUEEZED_HARD = 3,
  NUBO_STORAGE_MAX_ENUM = 0x7fffffff
} nubo_storage;
typedef enum nubo_plain { NUBO_PLAIN_A = 0 } nubo_plain;
"""

    def test_python_and_rust_types_with_docs(self) -> None:
        abi = read(self.BODY)
        py = enums.python(abi)
        self.assertIn('class Storage(OpenIntEnum):\n    """How a thing is stored. (C: nubo_storage)"""',
                      py)
        self.assertIn('    RAW = 0\n    """As it is."""', py)
        self.assertIn("    SQUEEZED_HARD = 3\n", py)
        self.assertNotIn("MAX_ENUM", py)
        self.assertNotIn("Plain", py)  # not marked: no type of its own
        self.assertTrue(all(len(line) <= 100 for line in py.splitlines()))
        rs = enums.rust(abi)
        self.assertIn("pub enum Storage {", rs)
        self.assertIn("    /// As it is.\n    Raw,", rs)
        self.assertIn("    SqueezedHard,", rs)
        self.assertIn("Storage::SqueezedHard => ffi::NUBO_STORAGE_SQUEEZED_HARD,", rs)
        self.assertIn("ffi::NUBO_STORAGE_RAW => Some(Storage::Raw),", rs)
        self.assertIn("_ => None,", rs)
        self.assertTrue(all(len(line) <= 100 for line in rs.splitlines()))


class StubsTest(unittest.TestCase):
    def test_every_entry_point_of_a_capability_left_out_says_unsupported(self) -> None:
        abi = read("""
typedef struct nubo_thing nubo_thing;
NUBO_C_API int nubo_core(void);
#include "nubo_more.h"
""", {"nubo_more.h": """#include "nubo.h"
typedef enum nubo_status { NUBO_OK = 0 } nubo_status;
NUBO_C_API nubo_status nubo_more_make(const char* const* names, size_t n, nubo_thing** out);
NUBO_C_API void nubo_more_free(nubo_thing* thing);
NUBO_C_API size_t nubo_more_count(const nubo_thing* thing);
NUBO_C_API int nubo_more_done(const nubo_thing* thing);
NUBO_C_API void* nubo_more_data(nubo_thing* thing);
"""})
        text = stubs(abi, "NUBO_WITH_MORE", ["nubo_more.h"])
        self.assertIn('OPTION = "NUBO_WITH_MORE"', text)
        self.assertIn("NUBO_C_API nubo_status nubo_more_make(const char* const*, size_t, "
                      "nubo_thing**) { return nubo::capi::unsupported(__func__, OPTION); }", text)
        self.assertIn("NUBO_C_API void nubo_more_free(nubo_thing*) { }", text)
        self.assertIn("nubo_more_count(const nubo_thing*) { return 0; }", text)
        self.assertIn("nubo_more_done(const nubo_thing*) { return 1; }", text)
        self.assertIn("nubo_more_data(nubo_thing*) { return nullptr; }", text)
        self.assertNotIn("nubo_core", text)  # only the headers named
        with self.assertRaises(HeaderError):
            stubs(abi, "NUBO_WITH_NONE", ["nubo_none.h"])


class ConventionsTest(unittest.TestCase):
    def faults(self, body: str) -> str:
        with self.assertRaises(HeaderError) as e:
            check_conventions(read(body))
        return str(e.exception)

    def test_the_headers_keep_the_rules(self) -> None:
        root = Path(__file__).resolve().parents[2]
        check_conventions(read_abi(root / "capi", root / "include"))

    def test_a_function_without_its_capability_prefix_is_refused(self) -> None:
        self.assertIn("nubo_pack has no capability prefix",
                      self.faults("NUBO_C_API int nubo_pack(void);"))
        self.assertEqual(capability_of("nubo_transfer_pack"), "transfer")
        self.assertEqual(capability_of("nubo_worker_all_reduce"), "parallel")
        self.assertEqual(capability_of("nubo_last_error"), "core")
        self.assertIsNone(capability_of("nubo_archive_open"))

    def test_two_enums_sharing_a_constant_prefix_are_refused(self) -> None:
        text = self.faults("""
typedef enum nubo_a { NUBO_COST_X = 0, NUBO_COST_Y = 1 } nubo_a;
typedef enum nubo_b { NUBO_COST_P = 0, NUBO_COST_Q = 1 } nubo_b;
""")
        self.assertIn("NUBO_COST_P of nubo_b begins with NUBO_COST_", text)

    def test_a_struct_nubo_fills_needs_its_suffix(self) -> None:
        text = self.faults("""
typedef struct nubo_cost_handles { uint32_t struct_size; } nubo_cost_handles;
NUBO_C_API int nubo_cost_get(nubo_cost_handles* out);
""")
        self.assertIn("nubo_cost_get fills a nubo_cost_handles", text)
        read_ok = read("""
typedef struct nubo_cost_x_options { uint32_t struct_size; } nubo_cost_x_options;
NUBO_C_API int nubo_cost_x_options_init(nubo_cost_x_options* o, size_t size);
""")
        check_conventions(read_ok)  # an _init fills the caller's options: not an out-struct

    def test_a_type_no_binding_knows_is_refused(self) -> None:
        abi = read("NUBO_C_API int nubo_g(struct timeval* t);")
        with self.assertRaises(HeaderError) as e:
            python(abi)
        self.assertIn("timeval", str(e.exception))
        with self.assertRaises(HeaderError):
            rust(abi)


if __name__ == "__main__":
    unittest.main()
