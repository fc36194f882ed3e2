// jemalloc's options, compiled into the sator executable where it links
// jemalloc (CMakeLists.txt; $MALLOC_CONF still overrides them at run time).
//
// thp:always: jemalloc asks the kernel for transparent huge pages on its
// arenas (madvise(MADV_HUGEPAGE), which the kernels' default "madvise" mode
// honours). A large graph's run touches hundreds of megabytes of fresh
// memory, and taking it a 4 KiB page fault at a time cost more than the
// work done in it: on a 2-core VM, reading 17 copies of a training graph
// spent 6x as long in page faults as in parsing (read 290 ms, 47 ms with
// huge pages), and 60 copies' whole optimize ran 5.5-6.3 s against 3.6-3.9
// s (docs/benchmarks.md "The allocator's pages"). The cost is up to a huge
// page of slack per arena extent: 4% more peak RSS at 60 copies.
extern "C" {
// NOLINTNEXTLINE: jemalloc reads this global by name.
const char* malloc_conf = "thp:always";
}
