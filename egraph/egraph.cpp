#include "egraph/egraph.h"

#include <algorithm>
#include <stdexcept>

#include "egraph/explain.h"

namespace sator::eg {

namespace {

// Canonical children of a node being added, without a heap allocation for
// the common small arities.
class ChildBuffer {
 public:
  explicit ChildBuffer(size_t n) : heap_(n > kInline ? n : 0) {}
  Id* data() { return heap_.empty() ? inline_ : heap_.data(); }

 private:
  static constexpr size_t kInline = 8;
  Id inline_[kInline];
  std::vector<Id> heap_;
};

}  // namespace

EGraph::EGraph(Analysis* analysis) : analysis_(analysis) {}
EGraph::~EGraph() = default;

void EGraph::enable_explanations() {
  if (store_.size() != 0) throw std::logic_error("explanations must be enabled before the first add");
  explain_ = std::make_unique<Explain>(*this);
}

Id EGraph::find(Id id) const {
  while (!(link_[id] & kRoot)) id = link_[id];
  return id;
}

Id EGraph::find_mut(Id id) {
  Id root = id;
  while (!(link_[root] & kRoot)) root = link_[root];
  while (id != root) {  // path compression
    const Id next = link_[id];
    link_[id] = root;
    id = next;
  }
  return root;
}

std::span<const Id> EGraph::classes_with_op(OpId op) const {
  ensure_index();
  if (op + 1 >= op_class_begin_.size()) return {};
  return {op_class_ids_.data() + op_class_begin_[op], op_class_begin_[op + 1] - op_class_begin_[op]};
}

std::optional<Id> EGraph::lookup(OpId op, AttrId attr, std::span<const Id> children) const {
  ChildBuffer buf(children.size());
  Id* canon = buf.data();
  for (size_t i = 0; i < children.size(); ++i) canon[i] = find(children[i]);
  std::span<const Id> key(canon, children.size());
  const Id n = hashcons_.find(store_, op, attr, key, Hashcons::hash(op, attr, key));
  if (n == kNoId) return std::nullopt;
  return find(n);
}

Id EGraph::add(OpId op, AttrId attr, std::span<const Id> children) {
  return find(add_uncanonical(op, attr, children));
}

Id EGraph::add_uncanonical(OpId op, AttrId attr, std::span<const Id> children) {
  ChildBuffer buf(children.size());
  Id* canon = buf.data();
  for (size_t i = 0; i < children.size(); ++i) canon[i] = find_mut(children[i]);
  std::span<const Id> key(canon, children.size());
  const uint32_t h = Hashcons::hash(op, attr, key);
  const Id existing = hashcons_.find(store_, op, attr, key, h);
  if (existing != kNoId) {
    if (!explain_) return existing;
    // With explanations every distinct term as written gets its own id,
    // joined to the existing class by congruence, so proofs can name it.
    if (Id seen = explain_->term_id(op, attr, children); seen != kNoId) return seen;
    const Id id = store_.push(op, attr, key);
    link_.push_back(find_mut(existing));  // not a class of its own: a term in that one
    explain_->add_term(id, op, attr, children);
    explain_->record_union(existing, id, {}, /*congruence=*/true);
    return id;
  }
  const Id id = store_.push(op, attr, key);
  make_class(id);
  hashcons_.insert(id, h);
  ++egg_memo_size_;
  if (explain_) explain_->add_term(id, op, attr, children);
  if (analysis_) {
    analysis_->make(*this, id);
    analysis_->modify(*this, id);
  }
  return id;
}

Id EGraph::make_class(Id node) {
  if (node >= kRoot) throw std::length_error("e-graph is full (2^31 ids)");
  link_.push_back(kRoot | static_cast<Id>(classes_.size()));
  classes_.push_back(Class{SmallIds(node), SmallIds()});
  slot_owner_.push_back(node);
  for (Id child : store_.children(node)) cls(child).parents.push_back(node);
  // The children are canonical now, but unions before the next rebuild may
  // make them stale: rebuild re-canonicalizes everything on this list.
  pending_.push_back(node);
  ++total_class_nodes_;
  note_changed(node);
  return node;
}

bool EGraph::union_classes(Id a, Id b, std::string_view reason) { return perform_union(a, b, reason, false); }

bool EGraph::perform_union(Id a, Id b, std::string_view reason, bool congruence) {
  Id r1 = find_mut(a), r2 = find_mut(b);
  if (r1 == r2) return false;
  if (cls(r1).parents.size() < cls(r2).parents.size()) std::swap(r1, r2);  // fewer parents to re-examine
  if (explain_) explain_->record_union(a, b, reason, congruence);
  // Take class r2 out of the dense class array (the last class fills its slot).
  const Id s2 = slot(r2);
  link_[r2] = r1;
  Class c2 = std::move(classes_[s2]);
  const Id last = static_cast<Id>(classes_.size() - 1);
  if (s2 != last) {
    classes_[s2] = std::move(classes_[last]);
    slot_owner_[s2] = slot_owner_[last];
    link_[slot_owner_[s2]] = kRoot | s2;
  }
  classes_.pop_back();
  slot_owner_.pop_back();

  Class& c1 = cls(r1);
  pending_.insert(pending_.end(), c2.parents.begin(), c2.parents.end());
  if (analysis_) {
    const DidMerge did = analysis_->merge(r1, r2);
    if (did.first) analysis_pending_.extend(c1.parents);
    if (did.second) analysis_pending_.extend(c2.parents);
  }
  if (c1.nodes.capacity() < c2.nodes.capacity()) c1.nodes.swap(c2.nodes);  // append into the bigger block
  c1.nodes.append(c2.nodes);
  if (c1.parents.capacity() < c2.parents.capacity()) c1.parents.swap(c2.parents);
  c1.parents.append(c2.parents);
  if (r1 >= is_dirty_.size()) is_dirty_.resize(link_.size() + 1024, 0);
  if (!is_dirty_[r1]) {
    is_dirty_[r1] = 1;
    dirty_.push_back(r1);
  }
  ++stats_.unions;
  note_changed(r1);
  if (analysis_) analysis_->modify(*this, r1);
  return true;
}

void EGraph::process_unions() {
  while (!pending_.empty() || !analysis_pending_.empty()) {
    while (!pending_.empty()) {
      const Id n = pending_.back();
      pending_.pop_back();
      std::span<Id> kids = store_.mutable_children(n);
      bool stale = false;  // most entries are repeats whose key is already current
      for (Id c : kids) stale |= !is_canonical(c);
      if (!stale) continue;
      const OpId op = store_.op(n);
      const AttrId attr = store_.attr(n);
      const uint32_t old_h = Hashcons::hash(op, attr, kids);
      for (Id& c : kids) c = find_mut(c);
      hashcons_.erase(n, old_h);
      const Id home = find_mut(n);
      note_changed(home);
      if (home >= is_dirty_.size()) is_dirty_.resize(link_.size() + 1024, 0);
      if (!is_dirty_[home]) {
        is_dirty_[home] = 1;
        dirty_.push_back(home);
      }
      const uint32_t h = Hashcons::hash(op, attr, kids);
      const Id other = hashcons_.find(store_, op, attr, kids, h);
      if (other == kNoId) {
        hashcons_.insert(n, h);
        ++egg_memo_size_;
      } else if (perform_union(other, n, {}, /*congruence=*/true)) {
        ++stats_.congruence_unions;
      }
    }
    while (!analysis_pending_.empty()) {
      const Id n = analysis_pending_.pop();
      const Id c = find_mut(n);
      const DidMerge did = analysis_->merge_node(*this, c, n);
      if (did.first) {
        note_changed(c);
        analysis_pending_.extend(cls(c).parents);
        analysis_->modify(*this, c);
      }
    }
  }
}

void EGraph::rebuild_classes() {
  for (Id id : dirty_) {
    is_dirty_[id] = 0;
    if (!is_canonical(id)) continue;  // merged away: its root is on the list too
    SmallIds& nodes = cls(id).nodes;
    std::sort(nodes.begin(), nodes.end(), [this](Id a, Id b) { return store_.less(a, b); });
    Id* end = std::unique(nodes.begin(), nodes.end(), [this](Id a, Id b) { return store_.same(a, b); });
    total_class_nodes_ -= static_cast<size_t>(nodes.end() - end);
    nodes.truncate(static_cast<uint32_t>(end - nodes.begin()));
  }
  dirty_.clear();
  index_stale_ = true;
}

void EGraph::build_index() const {
  index_stale_ = false;
  // Class list, in id order: a scan of the roots, cheaper than sorting.
  class_ids_.clear();
  for (Id i = 0; i < link_.size(); ++i)
    if (link_[i] & kRoot) class_ids_.push_back(i);

  // Per-operator index (compressed rows). One pass reads each class's
  // distinct operators into a flat list; counting and filling then read
  // that list sequentially instead of the node store twice.
  std::vector<OpId> ops;  // distinct ops of class_ids_[0], then of [1], ...
  std::vector<uint32_t> ends;
  ops.reserve(class_ids_.size() * 2);
  ends.reserve(class_ids_.size());
  std::vector<uint32_t> count;
  for (Id c : class_ids_) {
    OpId prev = kNoId;
    for (Id n : classes_[slot(c)].nodes) {
      const OpId op = store_.op(n);
      if (op == prev) continue;
      prev = op;
      ops.push_back(op);
      if (op >= count.size()) count.resize(op + 1, 0);
      ++count[op];
    }
    ends.push_back(static_cast<uint32_t>(ops.size()));
  }
  op_class_begin_.assign(count.size() + 1, 0);
  for (size_t i = 0; i < count.size(); ++i) op_class_begin_[i + 1] = op_class_begin_[i] + count[i];
  op_class_ids_.resize(op_class_begin_.back());
  std::vector<uint32_t> fill(op_class_begin_.begin(), op_class_begin_.end() - 1);
  for (size_t k = 0, i = 0; k < class_ids_.size(); ++k)
    for (; i < ends[k]; ++i) op_class_ids_[fill[ops[i]]++] = class_ids_[k];
}

size_t EGraph::rebuild() {
  const uint64_t before = stats_.congruence_unions;
  process_unions();
  rebuild_classes();
  // Work lists peak during a rebuild; do not keep that memory between them.
  if (pending_.capacity() > (1u << 16)) pending_ = std::vector<Id>();
  if (dirty_.capacity() > (1u << 16)) dirty_ = std::vector<Id>();
  analysis_pending_.release();
  ++stats_.rebuilds;
  return static_cast<size_t>(stats_.congruence_unions - before);
}

void EGraph::retain_class_nodes(Id id, const std::function<bool(Id)>& keep) {
  const Id c = find_mut(id);
  total_class_nodes_ -= cls(c).nodes.erase_if([&](Id n) { return !keep(n); });
  note_changed(c);
}

std::vector<std::pair<std::string, size_t>> EGraph::memory_breakdown() const {
  auto ids = [](const std::vector<Id>& v) { return v.capacity() * sizeof(Id); };
  size_t lists = 0, parents = 0;
  for (const Class& c : classes_) {
    lists += c.nodes.heap_bytes();
    parents += c.parents.heap_bytes();
  }
  return {
      {"node store (op, attr, children)", store_.memory_bytes()},
      {"hashcons", hashcons_.memory_bytes()},
      {"union-find and class slots", ids(link_) + ids(slot_owner_) + changed_at_.capacity() * sizeof(uint32_t)},
      {"class headers (with inline lists)", classes_.capacity() * sizeof(Class)},
      {"class node lists (heap)", lists},
      {"class parent lists (heap)", parents},
      {"operator index and class list", ids(op_class_ids_) + op_class_begin_.capacity() * sizeof(uint32_t) + ids(class_ids_)},
      {"work lists", ids(pending_) + ids(dirty_) + is_dirty_.capacity() + analysis_pending_.memory_bytes()},
  };
}

size_t EGraph::memory_bytes() const {
  size_t total = 0;
  for (const auto& [name, bytes] : memory_breakdown()) total += bytes;
  return total;
}

void EGraph::note_made_by(Id first, std::string_view rule) {
  if (!record_makers_ || first >= num_nodes()) return;
  uint32_t k = 0;
  while (k < maker_names_.size() && maker_names_[k] != rule) ++k;
  if (k == maker_names_.size()) maker_names_.emplace_back(rule);
  maker_.resize(num_nodes(), 0);
  for (Id n = first; n < num_nodes(); ++n)
    if (maker_[n] == 0) maker_[n] = k + 1;
}

std::string_view EGraph::made_by(Id node) const {
  return node < maker_.size() && maker_[node] ? std::string_view(maker_names_[maker_[node] - 1]) : std::string_view();
}

}  // namespace sator::eg
