// @file pbrt_tokenizer_test.cpp: the tokens of pbrt-v4's scene format: kinds, values, escapes, comments, lines,
// and the errors (with file and line) for bad strings and numbers.
#include "tracer/host/pbrt_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pbrt_test_util.h"
#include "test_util.h"

namespace tracer {
namespace {

std::vector<PbrtToken> All(const std::string& text) {
  PbrtTokenizer tok(text, "t.pbrt");
  std::vector<PbrtToken> out;
  for (PbrtToken t = tok.Next(); t.kind != PbrtTokenKind::kEnd; t = tok.Next()) out.push_back(t);
  return out;
}

// The kinds of the tokens, one letter each: w word, n number, s string, b bool, [ and ].
std::string KindsOf(const std::vector<PbrtToken>& tokens) {
  std::string kinds;
  for (const PbrtToken& t : tokens) kinds += "ewnsb[]"[static_cast<int>(t.kind)];
  return kinds;
}

std::string ErrorOf(const std::string& text) {
  return test::PbrtErrorFrom([&] { All(text); });
}

TEST(PbrtTokenizer, KindsAndValues) {
  auto t = All("Shape \"sphere\" \"float radius\" [ 2.5 ] \"bool b\" true false -3 +4 .5 1e3 All");
  EXPECT_EQ(KindsOf(t), "wss[n]sbbnnnnw");
  ASSERT_EQ(t.size(), 14u);
  EXPECT_EQ(t[0].text, "Shape");
  EXPECT_EQ(t[1].text, "sphere");
  EXPECT_EQ(t[2].text, "float radius");
  EXPECT_DOUBLE_EQ(t[4].number, 2.5);
  EXPECT_FALSE(t[4].IsInteger());
  EXPECT_EQ(t[7].number, 1.0);
  EXPECT_EQ(t[8].number, 0.0);
  EXPECT_DOUBLE_EQ(t[9].number, -3.0);
  EXPECT_TRUE(t[9].IsInteger());
  EXPECT_DOUBLE_EQ(t[10].number, 4.0);
  EXPECT_TRUE(t[10].IsInteger());
  EXPECT_DOUBLE_EQ(t[11].number, 0.5);
  EXPECT_DOUBLE_EQ(t[12].number, 1000.0);
  EXPECT_FALSE(t[12].IsInteger());
}

TEST(PbrtTokenizer, BracketsNeedNoSpaces) {
  auto t = All("[1 2]\"a\"[\"b\"]");
  EXPECT_EQ(KindsOf(t), "[nn]s[s]");
  ASSERT_EQ(t.size(), 8u);
  EXPECT_DOUBLE_EQ(t[2].number, 2.0);
  EXPECT_EQ(t[4].text, "a");
  EXPECT_EQ(t[5].text, "[");
  EXPECT_EQ(t[6].text, "b");
}

TEST(PbrtTokenizer, CommentsAndLines) {
  auto t = All("# header\nFilm # trailing \"not a string\"\r\n\n  \"rgb\"\t#x\n[#]\n]");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].text, "Film");
  EXPECT_EQ(t[0].line, 2);
  EXPECT_EQ(t[1].text, "rgb");
  EXPECT_EQ(t[1].line, 4);
  EXPECT_EQ(t[2].kind, PbrtTokenKind::kOpen);
  EXPECT_EQ(t[2].line, 5);
  EXPECT_EQ(t[3].kind, PbrtTokenKind::kClose);
  EXPECT_EQ(t[3].line, 6);
}

TEST(PbrtTokenizer, Escapes) {
  auto t = All(R"("a\"b" "c\\d" "t\tn\nr\rb\bf\f" "q\'")");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].text, "a\"b");
  EXPECT_EQ(t[1].text, "c\\d");
  EXPECT_EQ(t[2].text, "t\tn\nr\rb\bf\f");
  EXPECT_EQ(t[3].text, "q'");
}

TEST(PbrtTokenizer, PeekDoesNotConsume) {
  PbrtTokenizer tok("A B", "t.pbrt");
  EXPECT_EQ(tok.Peek().text, "A");
  EXPECT_EQ(tok.Peek().text, "A");
  EXPECT_EQ(tok.Next().text, "A");
  EXPECT_EQ(tok.Next().text, "B");
  EXPECT_EQ(tok.Next().kind, PbrtTokenKind::kEnd);
  EXPECT_EQ(*tok.File(), "t.pbrt");
}

TEST(PbrtTokenizer, Errors) {
  EXPECT_EQ(ErrorOf("Shape\n\"abc"), "t.pbrt:2: unterminated string: the file ends before its closing quote");
  EXPECT_EQ(ErrorOf("\n\n\"ab\ncd\""), "t.pbrt:3: unterminated string: a newline before its closing quote");
  EXPECT_EQ(ErrorOf("\"a\\qb\""), "t.pbrt:1: unknown escape '\\q' in a string");
  EXPECT_EQ(ErrorOf("Translate 1 2.0.3 4"), "t.pbrt:1: \"2.0.3\" is not a number");
  EXPECT_EQ(ErrorOf("\n-"), "t.pbrt:2: \"-\" is not a number");
  EXPECT_EQ(ErrorOf("+-1"), "t.pbrt:1: \"+-1\" is not a number");
  EXPECT_EQ(ErrorOf("1e999"), "t.pbrt:1: \"1e999\" is not a number");
  EXPECT_NE(ErrorOf(std::string("\xff\xfe"
                                "A\0",
                                4))
                .find("UTF-16"),
            std::string::npos);
}

TEST(PbrtTokenizer, Utf8ByteOrderMarkIsSkipped) {
  auto t = All("\xef\xbb\xbfWorldBegin");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].text, "WorldBegin");
}

TEST(PbrtTokenizer, MissingFileNamesIt) {
  try {
    PbrtTokenizer::FromFile("/nonexistent/dir/x.pbrt");
    FAIL() << "no error";
  } catch (const PbrtError& e) {
    EXPECT_EQ(e.file, "/nonexistent/dir/x.pbrt");
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.pbrt: cannot open"), std::string::npos) << e.what();
  }
}

TEST(PbrtTokenizer, ReadsAFile) {
  const std::string dir = test::MakeTempDir();
  test::WriteFile(dir + "/a.pbrt", "Film \"rgb\"\n# c\n\"integer xresolution\" 4\n");
  auto tok = PbrtTokenizer::FromFile(dir + "/a.pbrt");
  EXPECT_EQ(tok->Next().text, "Film");
  EXPECT_EQ(tok->Next().text, "rgb");
  PbrtToken decl = tok->Next();
  EXPECT_EQ(decl.line, 3);
  EXPECT_EQ(tok->Loc(decl).ToString(), dir + "/a.pbrt:3");
  test::RemoveTree(dir);
}

}  // namespace
}  // namespace tracer
