// The engine on small, hand-checkable e-graphs: hashconsing, congruence
// after rebuild, the invariants, the hashcons under deletion, patterns.
#include <catch2/catch.hpp>

#include <random>

#include "egraph/egraph.h"
#include "egraph/matcher.h"
#include "egraph/rewrite.h"

using namespace sator::eg;

namespace {
struct Fixture {
  Language lang;
  EGraph g;
  OpId f = lang.op("f"), h = lang.op("h"), a = lang.op("a"), b = lang.op("b"), c = lang.op("c");
  Id leaf(OpId op) { return g.add(op, kNoAttr, {}); }
  Id node(OpId op, std::initializer_list<Id> kids) { return g.add(op, kNoAttr, std::vector<Id>(kids)); }
  void check() {
    const std::string why = g.check_invariants();
    INFO(why);
    CHECK(why.empty());
  }
};
}  // namespace

TEST_CASE("adding the same node twice gives the same class", "[egraph]") {
  Fixture t;
  const Id x = t.leaf(t.a);
  CHECK(t.leaf(t.a) == x);
  const Id fx = t.node(t.f, {x});
  CHECK(t.node(t.f, {x}) == fx);
  CHECK(t.g.num_classes() == 2);
  CHECK(t.g.lookup(t.f, kNoAttr, std::vector<Id>{x}) == fx);
  CHECK_FALSE(t.g.lookup(t.h, kNoAttr, std::vector<Id>{x}));
  t.g.rebuild();
  t.check();
}

TEST_CASE("rebuild restores congruence, transitively", "[egraph]") {
  Fixture t;
  const Id x = t.leaf(t.a), y = t.leaf(t.b);
  const Id fx = t.node(t.f, {x}), fy = t.node(t.f, {y});
  const Id hfx = t.node(t.h, {fx}), hfy = t.node(t.h, {fy});
  REQUIRE(t.g.num_classes() == 6);
  CHECK(t.g.union_classes(x, y));
  CHECK_FALSE(t.g.union_classes(y, x));  // already one
  CHECK(t.g.find(fx) != t.g.find(fy));   // deferred until rebuild
  CHECK(t.g.rebuild() == 2);             // f x = f y, then h (f x) = h (f y)
  CHECK(t.g.find(fx) == t.g.find(fy));
  CHECK(t.g.find(hfx) == t.g.find(hfy));
  CHECK(t.g.num_classes() == 3);
  CHECK(t.g.total_class_nodes() == 4);  // {a, b}, {f}, {h}: duplicates removed
  t.check();
}

// The change clock the rule runner's memo reads (rulelang/rule_run.cpp): a
// class that gains a node, takes in another or has a member re-canonicalized
// moves past the clock; a class nothing touched stays where it was.
TEST_CASE("a class's change clock moves exactly when the class changes", "[egraph]") {
  Fixture t;
  const Id x = t.leaf(t.a), y = t.leaf(t.b), z = t.leaf(t.c);
  const Id fx = t.node(t.f, {x}), fy = t.node(t.f, {y}), hz = t.node(t.h, {z});
  t.g.rebuild();
  const uint32_t before = t.g.change_clock();
  CHECK(t.g.changed_at(hz) <= before);
  CHECK(t.node(t.f, {x}) == fx);  // an existing node: nothing changes
  CHECK(t.g.change_clock() == before);
  REQUIRE(t.g.union_classes(x, y));
  t.g.rebuild();  // f x = f y by congruence
  const Id xy = t.g.find(x), fxy = t.g.find(fx);
  CHECK(t.g.changed_at(xy) > before);
  CHECK(t.g.changed_at(fxy) > before);  // its member's child was merged
  CHECK_FALSE(t.g.is_canonical(t.g.find(x) == x ? y : x));  // the merged-away id says so
  CHECK(fxy == t.g.find(fy));
  CHECK(t.g.changed_at(hz) <= before);  // untouched
  CHECK(t.g.changed_at(t.g.find(z)) <= before);
  const uint32_t after_union = t.g.change_clock();
  const Id hx = t.node(t.h, {x});  // a new node: a new class, after the clock
  CHECK(t.g.changed_at(hx) > after_union);
  CHECK(t.g.changed_at(xy) <= after_union);  // gaining a parent is no change of the class
}

TEST_CASE("unions can close cycles", "[egraph]") {
  Fixture t;
  const Id x = t.leaf(t.a);
  const Id fx = t.node(t.f, {x});
  t.g.union_classes(x, fx);  // x = f(x): f(f(x)) is x too
  t.g.rebuild();
  CHECK(t.node(t.f, {fx}) == t.g.find(x));
  CHECK(t.g.num_classes() == 1);
  t.check();
}

TEST_CASE("invariants hold through many random unions", "[egraph]") {
  Fixture t;
  std::mt19937 rng(7);
  std::vector<Id> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(t.leaf(t.lang.op(std::string("l").append(std::to_string(i)))));
  for (int i = 0; i < 400; ++i) {
    const Id u = ids[rng() % ids.size()], v = ids[rng() % ids.size()];
    ids.push_back(rng() % 2 ? t.node(t.f, {u, v}) : t.node(t.h, {u}));
  }
  for (int round = 0; round < 10; ++round) {
    for (int k = 0; k < 15; ++k) t.g.union_classes(ids[rng() % ids.size()], ids[rng() % ids.size()]);
    t.g.rebuild();
    t.check();
  }
  // Congruence, checked by brute force: equal ops over equal classes share a class.
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t j = i + 1; j < ids.size(); ++j) {
      const Id p = ids[i], q = ids[j];
      if (t.g.op(p) != t.g.op(q) || t.g.children(p).size() != t.g.children(q).size()) continue;
      bool same_kids = true;
      for (size_t k = 0; k < t.g.children(p).size(); ++k)
        same_kids &= t.g.find(t.g.children(p)[k]) == t.g.find(t.g.children(q)[k]);
      if (same_kids) CHECK(t.g.find(p) == t.g.find(q));
    }
}

TEST_CASE("the hashcons survives heavy deletion and reinsertion", "[egraph]") {
  NodeStore store;
  Hashcons table;
  std::vector<uint32_t> hashes;
  for (Id i = 0; i < 5000; ++i) {
    const Id kids[2] = {i % 97, i / 97};
    store.push(1, 0, kids);
    hashes.push_back(Hashcons::hash(1, 0, kids));
    table.insert(i, hashes[i]);
  }
  for (Id i = 0; i < 5000; i += 3) CHECK(table.erase(i, hashes[i]));
  CHECK_FALSE(table.erase(0, hashes[0]));
  for (Id i = 0; i < 5000; ++i) {
    const Id expect = i % 3 == 0 ? kNoId : i;
    CHECK(table.find(store, 1, 0, store.children(i), hashes[i]) == expect);
  }
  CHECK(table.size() == 5000 - 1667);
}

TEST_CASE("patterns match, compare repeated variables, look up ground terms", "[egraph][pattern]") {
  Fixture t;
  const Id x = t.leaf(t.a), y = t.leaf(t.b);
  t.node(t.f, {x, x});
  t.node(t.f, {x, y});
  t.node(t.f, {y, y});
  t.g.rebuild();
  auto count = [&](const char* text) {
    std::vector<std::string> vars;
    Pattern p = Pattern::parse(text, t.lang, vars);
    Matches m;
    Program::compile({&p}, static_cast<uint32_t>(vars.size())).search(t.g, m);
    return m.size();
  };
  CHECK(count("(f ?x ?y)") == 3);
  CHECK(count("(f ?x ?x)") == 2);
  CHECK(count("(f a ?y)") == 2);
  CHECK(count("(f ?y a)") == 1);
  CHECK(count("(f c ?y)") == 0);  // ground term absent
  CHECK(count("?z") == 5);
  CHECK(count("(h ?x)") == 0);
  std::vector<std::string> scratch;
  CHECK_THROWS_AS(Pattern::parse("(f ?x", t.lang, scratch), PatternError);
}

TEST_CASE("multi-patterns join on shared variables", "[egraph][pattern]") {
  Fixture t;
  const Id x = t.leaf(t.a), y = t.leaf(t.b);
  const Id fx = t.node(t.f, {x});
  const Id hx = t.node(t.h, {x});
  t.node(t.h, {y});
  t.g.rebuild();
  Rewrite rw("join", t.lang, "(f ?v); (h ?v)", [](EGraph&, Id, Subst) { return kNoId; });
  Matches m;
  rw.search(t.g, m);
  REQUIRE(m.size() == 1);
  CHECK(m.subst(0)[rw.var("?v")] == t.g.find(x));
  // The second pattern's root class comes with the match.
  CHECK(m.subst(0)[rw.var("?#root1")] == t.g.find(hx));
  CHECK(m.classes[0] == t.g.find(fx));
}

TEST_CASE("conditional rules and builders", "[egraph][rewrite]") {
  Fixture t;
  const Id x = t.leaf(t.a), y = t.leaf(t.b);
  const Id fx = t.node(t.f, {x}), fy = t.node(t.f, {y});
  t.g.rebuild();
  Rewrite only_a("f-a-to-h", t.lang, "(f ?v)", "(h ?v)");
  only_a.add_condition([&](EGraph& g, Id, Subst s) { return g.find(s[0]) == g.find(x); });
  Matches m;
  only_a.search(t.g, m);
  CHECK(m.size() == 2);
  CHECK(only_a.apply(t.g, m) == 1);
  t.g.rebuild();
  CHECK(t.g.lookup(t.h, kNoAttr, std::vector<Id>{x}) == t.g.find(fx));
  CHECK_FALSE(t.g.lookup(t.h, kNoAttr, std::vector<Id>{y}));
  CHECK(t.g.find(fy) != t.g.find(fx));
  t.check();
  CHECK_THROWS_AS(Rewrite("bad", t.lang, "(f ?v)", "(h ?w)"), PatternError);
}

TEST_CASE("attributes: literals and wildcards in patterns", "[egraph][pattern]") {
  Fixture t;
  const OpId perm = t.lang.op("permute");
  const Id x = t.leaf(t.a);
  const Id p10 = t.g.add(perm, t.lang.attr("1,0"), std::vector<Id>{x});
  const Id p01 = t.g.add(perm, t.lang.attr("0,1"), std::vector<Id>{x});
  t.g.rebuild();
  auto count = [&](const char* text) {
    std::vector<std::string> vars;
    Pattern p = Pattern::parse(text, t.lang, vars);
    Matches m;
    Program::compile({&p}, static_cast<uint32_t>(vars.size())).search(t.g, m);
    return m.size();
  };
  CHECK(count("(permute@1,0 ?x)") == 1);
  CHECK(count("(permute@_ ?x)") == 2);
  CHECK(count("(permute ?x)") == 0);  // no attribute is an attribute too
  CHECK(count("(permute@2,0 ?x)") == 0);
  CHECK(p10 != p01);
  // A rule can rewrite one attribute into another.
  Rewrite flip("flip", t.lang, "(permute@1,0 ?x)", "(permute@0,1 ?x)");
  Matches m;
  flip.search(t.g, m);
  CHECK(flip.apply(t.g, m) == 1);
  t.g.rebuild();
  CHECK(t.g.find(p10) == t.g.find(p01));
  t.check();
}

TEST_CASE("builders construct the right-hand side in C++", "[egraph][rewrite]") {
  Fixture t;
  const Id x = t.leaf(t.a), y = t.leaf(t.b);
  const Id fxy = t.node(t.f, {x, y});
  t.g.rebuild();
  // f(u, v) = h(g(v, u)), built node by node.
  const OpId g = t.lang.op("g");
  Rewrite swap_into_h("swap", t.lang, "(f ?u ?v)", [&](EGraph& e, Id, Subst s) {
    const Id inner = e.add(g, kNoAttr, std::vector<Id>{s[1], s[0]});
    return e.add(t.h, kNoAttr, std::vector<Id>{inner});
  });
  Matches m;
  swap_into_h.search(t.g, m);
  REQUIRE(m.size() == 1);
  CHECK(swap_into_h.apply(t.g, m) == 1);
  t.g.rebuild();
  const auto gyx = t.g.lookup(g, kNoAttr, std::vector<Id>{y, x});
  REQUIRE(gyx);
  CHECK(t.g.lookup(t.h, kNoAttr, std::vector<Id>{*gyx}) == t.g.find(fxy));
  t.check();
}
