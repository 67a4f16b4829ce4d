// Generated files: every value passes one emitter per format and reads back, by that format's
// own parser, as exactly the value it was (YAML by PyYAML, which SkyPilot reads its tasks with;
// shell words by bash). Names from outside are checked where they enter (utf8::check_plain),
// and files are written without following a link planted where they go.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../transfer/helpers.hpp"
#include "common/shell.hpp"
#include "common/small_file.hpp"
#include "common/utf8.hpp"
#include "common/yaml.hpp"
#include "error_of.hpp"
#include "skip.hpp"

using nubo_test::contains;
using nubo_test::error_of;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool has_pyyaml() {
  return std::system("/usr/bin/python3 -c 'import yaml' 2>/dev/null") == 0;
}

// Hostile strings of every kind: the injections once found, and random bytes.
std::vector<std::string> hostile_values(std::size_t random_count, bool utf8_only) {
  std::vector<std::string> v = {
      "R\rsetup: touch X\rresources:\r  cloud: aws\r  region: R\r#",
      "us-east-1\ntouch X #",
      "a: b",
      "- x",
      "'single' \"double\" \\back",
      "$(touch X)`touch X`${HOME}",
      "x\x1b[2Jy",
      "\xe2\x80\xa8line\xe2\x80\xa9sep\xc2\x85nel",
      "\xef\xbb\xbf"
      "bom",
      "\xe2\x80\xae"
      "reversed",
      "trailing \n\n",
      " leading",
      "#comment",
      "&anchor *alias !tag %directive @at `tick` | > ? : ,",
      "null",
      "true",
      "0x1f",
      "1e3",
      "~",
      "\t\ttabs",
      "",
      "\xf0\x9f\x98\x80 emoji",
  };
  std::mt19937_64 random(7);
  for (std::size_t i = 0; i < random_count; ++i) {
    std::string s(random() % 40, ' ');
    for (auto& c : s) {
      c = static_cast<char>(random() % 256);
      if (c == 0) c = '\n';
    }
    if (utf8_only) {  // keep the valid UTF-8 sequences, drop the rest
      std::string valid;
      for (std::size_t at = 0; at < s.size();) {
        char32_t cp = 0;
        const auto n = nubo::utf8::sequence(std::string_view(s).substr(at), cp);
        if (n == 0) {
          ++at;
          continue;
        }
        valid += s.substr(at, n);
        at += n;
      }
      s = valid;
    }
    v.push_back(s);
  }
  return v;
}

}  // namespace

TEST_CASE("a shell word reads back as itself, whatever it holds") {
  nubo_test::TempDir dir;
  const auto values = hostile_values(300, false);
  // One script printing each word between NUL separators; bash must read back every value.
  std::string script = "set -eu\n";
  for (const auto& v : values) script += "printf '%s\\0' " + nubo::shell::quote(v) + "\n";
  nubo::files::write_small_file(dir.path(), "words.sh", script, 0600, "test script");
  REQUIRE(std::system(("bash -n '" + dir / "words.sh" + "'").c_str()) == 0);
  REQUIRE(std::system(("cd '" + dir.path() + "' && bash words.sh > out").c_str()) == 0);
  const auto out = slurp(dir / "out");
  std::vector<std::string> back;
  for (std::size_t at = 0; at < out.size();) {
    const auto end = out.find('\0', at);
    back.push_back(out.substr(at, end - at));
    at = end + 1;
  }
  REQUIRE(back.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(back[i] == values[i]);
  CHECK(!std::ifstream(dir / "X"));  // nothing ran
  CHECK(contains(error_of([] { nubo::shell::quote(std::string("a\0b", 3), "cmd"); }),
                 "cmd: 'a\\x00b' holds a NUL byte"));
  // A comment stays one: no line of it can be a command.
  const auto c = nubo::shell::comment(
      "a\nb\rc\xe2\x80\xa8"
      "d");
  CHECK(c == "# a\n# b\\x0dc\\xe2\\x80\\xa8d\n");
}

TEST_CASE("YAML values read back by PyYAML as exactly the strings written") {
  if (!has_pyyaml()) NUBO_SKIP("PyYAML (python3-yaml) is not installed");
  nubo_test::TempDir dir;
  const auto values = hostile_values(300, true);
  // A document per value: its structure must be exactly the one meant.
  nubo::yaml::Writer y;
  y.comment(
      "header\nsetup: touch X\r\xe2\x80\xa8"
      "injected: 1");
  y.begin("values");
  for (std::size_t i = 0; i < values.size(); ++i) y.string("v" + std::to_string(i), values[i]);
  y.end();
  y.begin("texts");
  for (std::size_t i = 0; i < values.size(); ++i) y.text("t" + std::to_string(i), values[i]);
  y.end();
  y.strings("list", values);
  y.integer("n", static_cast<long long>(values.size()));
  y.boolean("ok", true);
  nubo::files::write_small_file(dir.path(), "doc.yaml", y.str(), 0600, "test YAML");
  // PyYAML reads it and writes each string back as JSON (ensure_ascii): compared here.
  const std::string check = R"(
import json, sys, yaml
doc = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
assert sorted(doc) == ["list", "n", "ok", "texts", "values"], sorted(doc)
n = doc["n"]
assert doc["ok"] is True
assert sorted(doc["values"]) == sorted("v%d" % i for i in range(n))
assert sorted(doc["texts"]) == sorted("t%d" % i for i in range(n))
out = [doc["values"]["v%d" % i] for i in range(n)] + [doc["texts"]["t%d" % i] for i in range(n)]
out += doc["list"]
json.dump(out, open(sys.argv[2], "w"))
)";
  nubo::files::write_small_file(dir.path(), "check.py", check, 0600, "test script");
  REQUIRE(std::system(("/usr/bin/python3 '" + dir / "check.py" + "' '" + dir / "doc.yaml" + "' '" +
                       dir / "back.json" + "'")
                          .c_str()) == 0);
  const auto back = nlohmann::json::parse(slurp(dir / "back.json"));
  REQUIRE(back.size() == 3 * values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    CHECK(back[i].get<std::string>() == values[i]);
    CHECK(back[values.size() + i].get<std::string>() == values[i]);
    CHECK(back[2 * values.size() + i].get<std::string>() == values[i]);
  }
  CHECK(contains(error_of([] { nubo::yaml::quoted("a\xff", "region"); }),
                 "region: 'a\\xff' is not UTF-8"));
}

TEST_CASE("a YAML list of mappings, nested, reads back as the structure written") {
  nubo::yaml::Writer y;
  y.begin("spec");
  y.items("containers");
  y.item();
  y.string("name", "main");
  y.strings("command", {"bash", "-c", "echo hi"});
  y.items("env");
  y.item();
  y.string("name", "A");
  y.string("value", "1");
  y.end();
  y.item();
  y.string("name", "B");
  y.begin("valueFrom");
  y.string("fieldPath", "x");
  y.end();
  y.end();
  y.end();
  y.text("script", "a\nb\n");
  y.end();
  y.item();
  y.string("name", "second");
  y.end();
  y.end();
  y.end();
  CHECK(y.str() ==
        "spec:\n"
        "  containers:\n"
        "    - name: \"main\"\n"
        "      command:\n"
        "        - \"bash\"\n"
        "        - \"-c\"\n"
        "        - \"echo hi\"\n"
        "      env:\n"
        "        - name: \"A\"\n"
        "          value: \"1\"\n"
        "        - name: \"B\"\n"
        "          valueFrom:\n"
        "            fieldPath: \"x\"\n"
        "      script: |2\n"
        "        a\n"
        "        b\n"
        "    - name: \"second\"\n");
  if (!has_pyyaml()) return;
  nubo_test::TempDir dir;
  nubo::files::write_small_file(dir.path(), "doc.yaml", y.str(), 0600, "test YAML");
  const std::string check =
      "import json, sys, yaml\n"
      "doc = yaml.safe_load(open(sys.argv[1]))\n"
      "want = {'spec': {'containers': [{'name': 'main', 'command': ['bash', '-c', 'echo hi'],\n"
      "  'env': [{'name': 'A', 'value': '1'}, {'name': 'B', 'valueFrom': {'fieldPath': 'x'}}],\n"
      "  'script': 'a\\nb\\n'}, {'name': 'second'}]}}\n"
      "assert doc == want, doc\n";
  nubo::files::write_small_file(dir.path(), "check.py", check, 0600, "test script");
  CHECK(std::system(
            ("/usr/bin/python3 '" + dir / "check.py" + "' '" + dir / "doc.yaml" + "'").c_str()) ==
        0);
}

TEST_CASE("names from outside: one line of printable UTF-8, or a clear refusal") {
  using nubo::utf8::check_plain;
  CHECK_NOTHROW(check_plain("us-east-1", "region", 64));
  CHECK_NOTHROW(check_plain("Zürich ☁", "region", 64));
  CHECK(contains(error_of([] { check_plain("R\rsetup: x", "catalog row 3: region", 64); }),
                 "catalog row 3: region: 'R\\rsetup: x' holds a control character or line break "
                 "(U+000D) at byte 1"));
  CHECK(contains(error_of([] {
                   check_plain(
                       "a\xe2\x80\xa8"
                       "b",
                       "tag", 64);
                 }),
                 "U+2028"));
  CHECK(contains(error_of([] {
                   check_plain(
                       "a\xe2\x80\xae"
                       "b",
                       "tag", 64);
                 }),
                 "reorders text"));
  CHECK(contains(error_of([] {
                   check_plain(
                       "a\xc2\x9b"
                       "b",
                       "tag", 64);
                 }),
                 "U+009B"));
  CHECK(contains(error_of([] { check_plain("a\xff", "tag", 64); }), "is not UTF-8 at byte 1"));
  CHECK(contains(error_of([] { check_plain(std::string(65, 'a'), "tag", 64); }),
                 "is 65 bytes long; at most 64"));
  CHECK_NOTHROW(check_plain("a\n\tb", "command", 64, nubo::utf8::Allow::lines));
  CHECK(contains(error_of([] { check_plain("a\rb", "command", 64, nubo::utf8::Allow::lines); }),
                 "U+000D"));
}

TEST_CASE("a file written whole never goes through a link planted where it goes") {
  nubo_test::TempDir dir;
  const auto victim = dir / "victim";
  nubo::files::write_small_file(dir.path(), "victim", "precious", 0644, "victim");
  // The final name a link to the victim: replaced by the new file, the victim untouched.
  REQUIRE(::symlink(victim.c_str(), (dir / "job.sbatch").c_str()) == 0);
  // Every temporary name a writer might pick is its own, made with O_EXCL: a planted one (as
  // the old fixed ".tmp" name) is never opened.
  REQUIRE(::symlink(victim.c_str(), (dir / "job.sbatch.tmp").c_str()) == 0);
  nubo::files::write_small_file(dir.path(), "job.sbatch", "#!/bin/bash\n", 0755, "job file");
  CHECK(slurp(victim) == "precious");
  struct stat st {};
  REQUIRE(::lstat((dir / "job.sbatch").c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK((st.st_mode & 0777) == 0755);
  REQUIRE(::stat(victim.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  CHECK(slurp(dir / "job.sbatch") == "#!/bin/bash\n");
  CHECK(
      contains(error_of([&] { nubo::files::write_small_file(dir.path(), "../x", "", 0644, "f"); }),
               "not a plain file name"));
  // Nothing left behind but the files and the links.
  int entries = 0;
  for (const char* name : {"victim", "job.sbatch", "job.sbatch.tmp"})
    entries += ::lstat((dir / name).c_str(), &st) == 0;
  CHECK(entries == 3);
  CHECK(std::system(("test $(ls -A '" + dir.path() + "' | wc -l) -eq 3").c_str()) == 0);
}
