#include <catch2/catch.hpp>

#include "ir/json_doc.h"
#include "ir/name_index.h"

#include <string>
#include <vector>

using sator::JsonDoc;
using sator::JsonSyntaxError;

TEST_CASE("the JSON parser reads what the format uses", "[json]") {
  JsonDoc doc(R"({"a":[1,-2,3.5,1e3,true,false,null,"x\"y\u00e9\ud83d\ude00"],"b":{}})");
  auto root = doc.root();
  REQUIRE(root.is_object());
  auto a = *root.find("a");
  REQUIRE(a.size() == 8);
  CHECK(a[0].as_int() == 1);
  CHECK(a[1].as_int() == -2);
  CHECK(a[2].as_double() == 3.5);
  CHECK(a[3].is_number());
  CHECK(a[3].as_double() == 1000.0);
  CHECK(a[4].as_bool());
  CHECK(a[6].is_null());
  CHECK(a[7].as_string() == "x\"y\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(root.find("b")->size() == 0);
  CHECK_FALSE(root.find("c"));
  CHECK(JsonDoc("-3.4028234663852886e+38").root().as_double() == -3.4028234663852886e+38);
  CHECK(JsonDoc("9223372036854775807").root().as_int() == INT64_MAX);
  CHECK(JsonDoc("18446744073709551616").root().int_overflow());
  CHECK(JsonDoc("\xEF\xBB\xBF[1]").root().size() == 1);  // a byte-order mark is ignored
}

TEST_CASE("dump writes compact JSON that parses back the same", "[json]") {
  const char* text = R"({"k":[1,2.5,"q\n",{"z":null}],"f":0.1,"g":3.0})";
  JsonDoc doc(text);
  const std::string dumped = doc.root().dump();
  CHECK(dumped == R"({"k":[1,2.5,"q\n",{"z":null}],"f":0.1,"g":3.0})");
  CHECK(JsonDoc(dumped).root().dump() == dumped);
}

TEST_CASE("the JSON parser is strict", "[json]") {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "[01]", "[1.]", "[.5]", "[1e]", "[+1]",
                          "nul", "[\"\x01\"]", "[\"\\x\"]", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\xff\"]",
                          "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "{\"a\":1,\"a\":2}", "[1] 2", "1e999", "[NaN]",
                          "[Infinity]", "'a'"}) {
    INFO(bad);
    CHECK_THROWS_AS(JsonDoc(bad), JsonSyntaxError);
  }
  CHECK_THROWS_WITH(JsonDoc(std::string(300, '[') + std::string(300, ']')), Catch::Contains("nesting deeper"));
  CHECK_THROWS_WITH(JsonDoc("{\n  \"a\": tru\n}"), Catch::Contains("line 2, column 8"));
}

TEST_CASE("the reader's name index: each name its id, duplicates refused, through growth", "[json]") {
  sator::NameIndex index;  // no reserve: grows from empty
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) {
    std::string name = i % 3 ? "add_" : "n";  // (appended: GCC 12 warns falsely on "a" + std::string)
    name += std::to_string(i % 3 ? i : i * 7919);
    names.push_back(std::move(name));
  }
  for (const std::string& n : names) REQUIRE(index.add(n));
  for (size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    REQUIRE(index.find(names[i]) == std::optional<sator::NodeId>(static_cast<sator::NodeId>(i)));
  }
  CHECK_FALSE(index.add(names[1234]));  // a duplicate adds nothing
  CHECK_FALSE(index.find("add_5000").has_value());
  CHECK_FALSE(index.find("").has_value());
  CHECK(index.add("add_5000"));  // the next id: the count of names before it
  CHECK(index.find("add_5000") == std::optional<sator::NodeId>(5000));
  sator::NameIndex empty;
  CHECK_FALSE(empty.find("x").has_value());
}
