// The tensor language of the e-graph: how a graph node becomes an e-node.
//
// The node's op string is the operator. Every reference to a tensor- or
// tuple-producing node inside its args and kwargs becomes a child, in order
// of appearance; a reference to a node that produces a symbolic integer is
// replaced by that integer's expression, so size lists carry no children and
// a `view` has exactly one. What remains — the args and kwargs with child
// slots — is the attribute, interned by a canonical text key.
//
// Nodes whose value is not a function of their arguments keep their name in
// the attribute, so that they are never merged: placeholders, constants,
// random ops, and ops the table does not know (which may be random).
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "egraph/language.h"
#include "ir/graph.h"

namespace sator {

struct NodeAttrs {
  std::vector<Value> args;  // Value::Kind::Node holds a child slot, not a node id
  std::vector<std::pair<std::string, Value>> kwargs;
  Role role = Role::None;
  std::optional<std::string> target;
  std::optional<Value> value;
  std::string unique_name;  // set for nodes that must stay distinct
};

class TensorLanguage : public eg::Language {
 public:
  struct Encoded {
    eg::OpId op;
    eg::AttrId attr;
    std::vector<NodeId> children;  // graph nodes, in slot order
  };

  Encoded encode(const Graph& g, NodeId n);
  eg::AttrId intern(const NodeAttrs& a);
  const NodeAttrs& attrs(eg::AttrId a) const { return attrs_.at(a); }
  std::string format_node(eg::OpId op, eg::AttrId attr) const override;
  // In patterns a bare operator matches any attribute: every tensor node
  // has one (its non-tensor arguments), and rules read it in their builders.
  std::optional<eg::Term> parse_token(std::string_view token, size_t arity) override;

  // Attributes of common layout ops built by rules.
  eg::AttrId view_attr(const std::vector<SymExpr>& shape);
  eg::AttrId permute_attr(const std::vector<int64_t>& dims);

 private:
  // Index = AttrId; 0 is empty. A deque: references to an attribute stay
  // valid while others are added (rules read them while they build).
  std::deque<NodeAttrs> attrs_ = std::deque<NodeAttrs>(1);
};

// The tensor and tuple nodes a node refers to, in child-slot order.
std::vector<NodeId> tensor_children(const Graph& g, NodeId n);

// Canonical text of a value, used as an interning key.
void append_value_key(std::string& out, const Value& v);

}  // namespace sator
