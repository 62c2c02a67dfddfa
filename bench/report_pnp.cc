// report_pnp.cc -- the pnp section of the report.
//
// Partner / non-partner queues (policy=pnp, policy=pnp-static) against the targets of their
// issue, in three parts that each run like the workload report (reference check, untimed
// pass, interleaved timed repetitions, ratios within each repetition):
//   gather  the hot-spot gather at P = 2048, m = 10, repeated 5 times (iters=5, as FDS
//           gathers at every time step), receives in rr and in random order: time per
//           operation as a speedup over mpich and over single+llv for thresholds (t), caps
//           (c) and pnp.move on / off, pnp over ll, and pnp-static with a profile recorded
//           from the same workload; the same over the first iteration alone and over the
//           later ones (x single+llv); pnp.partners, pnp.levels (vmatch_stat) and queues
//           after one replay and the bytes at the peak; which (t, c, move) settings meet the
//           target. Every replay is on a new instance (pnp would keep its partners otherwise).
//           mpich, 35 us per operation here, replays the first iteration alone and runs in
//           4 of the 7 repetitions (--full: every iteration, every repetition, and the
//           shortcut next to it); its first iteration is its fastest (1.1-1.4x in --full
//           runs), so x mpich is a lower bound.  --full also adds one-shot gathers;
//   sparse  neighbour exchanges and short queues: pnp / single over the same storage;
//   memory  bytes held and queues allocated at the peak of a gather whose every peer has
//           receives pending, N = 1024 and 4096, against the ob1-style per-peer lists and
//           the UCX-style hash.
// hash (policy=hash over llv, issue 12) joins the gather and memory parts where the build
// has it; report_hash.cc judges it against ob1 and ucx there.

#include "report_sections.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vmr
{

namespace
{

struct PnpSpec {
    const char *label, *spec; // spec nullptr: the baseline of that name
    bool profiled;            // pnp-static: a profile of the same workload is recorded first
    PnpRole role;
    bool full_only;
};

// sqrt(2048) = 45.25, so with c = 46 the bound floor(c * sqrt(N)) = 2081 admits every peer.
// pnp.move is on (the default) unless the label says move=off.
const PnpSpec kPnpGatherSpecs[] = {
    {"mpich", nullptr, false, kRoleOther, false},
    {"ob1", nullptr, false, kRoleOther, false}, // one list per peer, unbounded: a reference
    {"single+ll", "policy=single storage=ll", false, kRoleOther, true},
    {"single+llv", "policy=single storage=llv", false, kRoleSingleLlv, false},
    // Issue 12's hashed queues (when this build has them), judged against ob1 here.
    {kHashLabel, kHashSpec, false, kRoleOther, false},
    {"pnp t=100 c=1", "policy=pnp storage=llv pnp.threshold=100 pnp.cap=1", false, kRolePnpLlv,
     false},
    {"pnp t=100 c=8", "policy=pnp storage=llv pnp.threshold=100 pnp.cap=8", false, kRolePnpLlv,
     false},
    {"pnp t=100 c=46", "policy=pnp storage=llv pnp.threshold=100 pnp.cap=46", false,
     kRolePnpLlv, false},
    // The thesis's levels: a new partner's older entries stay in the shared queues.
    {"pnp t=100 c=46 move=off",
     "policy=pnp storage=llv pnp.threshold=100 pnp.cap=46 pnp.move=off", false, kRolePnpLlv,
     false},
    {"pnp t=100 c=8 move=off",
     "policy=pnp storage=llv pnp.threshold=100 pnp.cap=8 pnp.move=off", false, kRolePnpLlv,
     true},
    {"pnp t=20 c=1", "policy=pnp storage=llv pnp.threshold=20 pnp.cap=1", false, kRolePnpLlv,
     true},
    {"pnp t=1000 c=1", "policy=pnp storage=llv pnp.threshold=1000 pnp.cap=1", false,
     kRolePnpLlv, true},
    {"pnp t=1000 c=46", "policy=pnp storage=llv pnp.threshold=1000 pnp.cap=46", false,
     kRolePnpLlv, true},
    {"pnp t=5000 c=1", "policy=pnp storage=llv pnp.threshold=5000 pnp.cap=1", false,
     kRolePnpLlv, true},
    {"pnp+ll t=100 c=46", "policy=pnp storage=ll pnp.threshold=100 pnp.cap=46", false,
     kRoleOther, false},
    {"static+llv c=1", "policy=pnp-static storage=llv pnp.cap=1", true, kRoleOther, false},
    {"static+llv c=46", "policy=pnp-static storage=llv pnp.cap=46", true, kRoleOther, false},
};

// The gather repeated 5 times (iters=5: FDS gathers at every time step; each iteration ends
// with both queues empty), arrivals interleaved at random with the posts.  The report times
// the first iteration apart from the later ones, so the one-shot figure comes with each row.
// --full adds one-shot gathers: some messages early (the standard suite's P=1024 shapes),
// and receives all pre-posted (interleave=0), the FDS shape.
const Workload kPnpGathers[] = {
    {"gather P=2048 m=10 rr x5", "gather P=2048 m=10 order=rr iters=5"},
    {"gather P=2048 m=10 random x5", "gather P=2048 m=10 order=random iters=5"},
};
const Workload kPnpFullGathers[] = {
    {"gather P=2048 m=10 random", "gather P=2048 m=10 order=random early=25"},
    {"gather P=2048 m=10 rr", "gather P=2048 m=10 order=rr early=50"},
    {"gather P=2048 m=10 reverse pre", "gather P=2048 m=10 order=reverse interleave=0"},
    {"gather P=2048 m=10 random pre", "gather P=2048 m=10 order=random interleave=0"},
};

// Storages compared in the sparse part: single and pnp (defaults t=100, c=1) over each.
const char *const kPnpStorages[] = {"ll", "lla", "llv"};

const Workload kPnpSparse[] = {
    {"neighbours 26 x2", "neighbours P=512 k=26 msgs=2 steps=200"},
    {"neighbours 6 random x4", "neighbours P=512 k=6 topo=random msgs=4 steps=400"},
    {"mixed", "mixed P=512 k=26 steps=200"},
    {"short: neighbours 6 x1", "neighbours P=64 k=6 msgs=1 steps=3000"},
    {"neighbours 26 rnd x8 skew",
     "neighbours P=4096 k=26 topo=random msgs=8 steps=100 skew=300"},
    // Queues of one entry: the fixed cost of a call, which the partner lookup must not raise.
    {"short: allreduce-rd P=200", "allreduce-rd P=200 calls=1000"},
};

const PnpSpec kPnpMemorySpecs[] = {
    {"mpich", nullptr, false, kRoleOther, false},
    {"ob1", nullptr, false, kRoleOther, false},
    {"ucx", nullptr, false, kRoleOther, false}, // issue 12 judges hash's bytes against it
    {"single+ll", "policy=single storage=ll", false, kRoleOther, false},
    {"single+llv", "policy=single storage=llv", false, kRoleOther, false},
    {kHashLabel, kHashSpec, false, kRoleOther, false},
    {"pnp c=1", "policy=pnp storage=llv pnp.cap=1", false, kRoleOther, false},
    {"pnp c=46", "policy=pnp storage=llv pnp.cap=46", false, kRoleOther, false},
    {"pnp+ll c=46", "policy=pnp storage=ll pnp.cap=46", false, kRoleOther, false},
};

// Every peer has m = 4 receives pending at the peak (all posted before any message).
const Workload kPnpMemory[] = {
    {"memory N=1024", "gather P=1024 m=4 order=random interleave=0"},
    {"memory N=4096", "gather P=4096 m=4 order=random interleave=0"},
};
const Workload kPnpFullMemory[] = {
    {"memory N=16384", "gather P=16384 m=4 order=random interleave=0"},
};

// Repetitions of the gather part (without --full or --reps), and how many of them mpich
// runs in.
const int kPnpGatherReps = 7, kPnpGatherYardReps = 4;

// Engines of a part: baselines by name, vmatch specs checked as in collect_engines (a spec
// this build rejects is left out with a note).  Profiled specs cannot be checked before a
// profile exists; an error shows in their cells.
std::vector<Engine> pnp_engines(const PnpSpec *specs, size_t n, bool full,
                                std::vector<PnpRole> *roles, std::vector<std::string> &notes)
{
    std::vector<Engine> out;
    for (size_t i = 0; i < n; i++) {
        const PnpSpec &s = specs[i];
        if (s.full_only && !full)
            continue;
        for (const Engine &en :
             section_engines("pnp", {{s.label, s.spec, s.profiled}}, notes)) {
            out.push_back(en);
            if (roles)
                roles->push_back(s.role);
        }
    }
    return out;
}

void pnp_run_part(Report &rep, const Workload *w, size_t n, const Workload *more, size_t nmore,
                  const Options &o)
{
    std::vector<Workload> list(w, w + n);
    if (o.full)
        list.insert(list.end(), more, more + nmore);
    run_rows(rep, list, o);
}

} // namespace

PnpSection run_pnp_section(const Options &o)
{
    PnpSection s;
    // Timed repetitions.  The repeated gathers: kPnpGatherReps (9 with --full), each replay
    // on a new instance.  One replay of the 5 iterations takes mpich about 7 s of CPU (35 us
    // per operation), the others 0.01 to 0.07 s; so mpich replays the first iteration alone
    // (1.5 s; a list keeps nothing between iterations) in kPnpGatherYardReps of them, which
    // keeps the section within about 30 s of CPU.  --full: mpich replays every iteration in
    // every repetition.  The short workloads get three times 5 (9), because their ratios are
    // judged against 1.05.
    Options og = o, os = o, om = o;
    int base = o.reps_given ? o.reps : o.full ? 9 : 5;
    og.reps = o.reps_given ? o.reps : o.full ? 9 : kPnpGatherReps;
    og.yard_reps = o.full ? 0 : std::min(og.reps, kPnpGatherYardReps);
    og.fresh = true;
    os.reps = 3 * base;
    om.reps = 0; // memory: the untimed pass alone
    std::vector<Engine> ge =
        pnp_engines(kPnpGatherSpecs, sizeof kPnpGatherSpecs / sizeof *kPnpGatherSpecs, o.full,
                    &s.gather_roles, s.notes);
    for (size_t i = 0, n = ge.size(); i < n; i++) {
        if (ge[i].label != kYardstick)
            continue;
        if (!o.full) {
            ge[i].first_iter = true;
        } else {
            // --full: mpich replays every iteration; a second mpich column replays the first
            // alone, which shows whether the default run's shortcut holds.
            Engine one = ge[i];
            one.label = std::string(kYardstick) + " it.1 only";
            one.first_iter = true;
            ge.insert(ge.begin() + (long)i + 1, one);
            s.gather_roles.insert(s.gather_roles.begin() + (long)i + 1, kRoleOther);
            break;
        }
    }
    if (og.yard_reps && og.yard_reps < og.reps)
        section_line(o,
                     fmt("== pnp section: hot-spot gather (%d repetitions, %s in %d of them)",
                         og.reps, kYardstick, og.yard_reps));
    else
        section_line(o, fmt("== pnp section: hot-spot gather (%d repetitions)", og.reps));
    s.gather.reset(new Report(og, ge));
    pnp_run_part(*s.gather, kPnpGathers, sizeof kPnpGathers / sizeof *kPnpGathers,
                 kPnpFullGathers, sizeof kPnpFullGathers / sizeof *kPnpFullGathers, o);

    section_line(
        o, fmt("== pnp section: sparse neighbours and short queues (%d repetitions)", os.reps));
    std::vector<PnpSpec> sp;
    std::vector<std::string> specs; // keeps the strings PnpSpec points into
    for (const char *st : kPnpStorages) {
        specs.push_back(std::string("single+") + st);
        specs.push_back(std::string("policy=single storage=") + st);
        specs.push_back(std::string("pnp+") + st);
        specs.push_back(std::string("policy=pnp storage=") + st);
    }
    for (size_t i = 0; i < specs.size(); i += 2)
        sp.push_back({specs[i].c_str(), specs[i + 1].c_str(), false, kRoleOther, false});
    s.sparse.reset(new Report(os, pnp_engines(sp.data(), sp.size(), o.full, nullptr, s.notes)));
    pnp_run_part(*s.sparse, kPnpSparse, sizeof kPnpSparse / sizeof *kPnpSparse, nullptr, 0, o);

    section_line(o, "== pnp section: memory at the peak");
    s.memory.reset(new Report(om, pnp_engines(kPnpMemorySpecs,
                                              sizeof kPnpMemorySpecs / sizeof *kPnpMemorySpecs,
                                              o.full, nullptr, s.notes)));
    pnp_run_part(*s.memory, kPnpMemory, sizeof kPnpMemory / sizeof *kPnpMemory, kPnpFullMemory,
                 sizeof kPnpFullMemory / sizeof *kPnpFullMemory, o);
    return s;
}

namespace
{

// The target of part (b), pnp no slower than single over the same storage.
const double kSparseTarget = 1.05;

// pnp / single over storage st on row: the median ratio of their times within a repetition
// and half its interquartile range in percent, single's median ns per operation; false with
// why ("-", "WRONG", "error") when there is no figure.
bool sparse_cell(const Report &rep, const Row &row, const char *st, double &ratio,
                 double &spread, double &single_ns, std::string &why)
{
    size_t a = find_engine(rep, std::string("single+") + st);
    size_t b = find_engine(rep, std::string("pnp+") + st);
    why = "-";
    if (a >= row.cells.size() || b >= row.cells.size())
        return false;
    std::string bad = cell_problem(row.cells[b]);
    if (bad.empty())
        bad = cell_problem(row.cells[a]);
    single_ns = median_ns(row.cells[a]);
    if (!bad.empty() || !rep_speedup(row.cells[b], row.cells[a], ratio, spread)) {
        why = bad.empty() ? "-" : bad;
        return false;
    }
    return true;
}

void print_pnp_sparse(FILE *f, const PnpSection &s, bool legend)
{
    const Report &rep = *s.sparse;
    if (legend)
        fprintf(f,
                "\npnp (b): sparse neighbours and short queues: pnp (t=100, c=1) against "
                "single over the same\nstorage.  single: its median ns per operation; "
                "pnp/single: the ratio of their times taken\nwithin each of %d repetitions, "
                "median ±half the interquartile range (target: at most %.2f,\njudged in the "
                "summary at the end).  partners: vmatch_stat pnp.partners of pnp+llv after one "
                "replay.\n\n",
                rep.options().reps, kSparseTarget);
    else
        fprintf(f,
                "\npnp (b): pnp / single over the same storage, median of %d repetitions "
                "±half IQR (below 1: pnp faster)\n",
                rep.options().reps);
    fprintf(f, "  %-27s %6s %8s", "workload", "max q", "partners");
    for (const char *st : kPnpStorages)
        fprintf(f, " %9s %13s", fmt("%s ns", st).c_str(), "pnp/single");
    fprintf(f, "\n");
    for (const Row &row : rep.rows()) {
        size_t pl = find_engine(rep, "pnp+llv");
        std::string part = pl < row.cells.size() && row.cells[pl].has_end
                               ? fmt("%llu", (unsigned long long)row.cells[pl].end_partners)
                               : "-";
        fprintf(f, "  %-27s %6llu %8s", row.name.c_str(),
                (unsigned long long)row.ref.max_pending, part.c_str());
        for (const char *st : kPnpStorages) {
            double m, sp, sn = NAN;
            std::string why;
            if (!sparse_cell(rep, row, st, m, sp, sn, why)) {
                fprintf(f, " %9s %13s", "-", why.c_str());
                continue;
            }
            fprintf(f, " %9.1f %13s", sn, pad(fmt("%.3f±%.0f%%", m, sp), 13).c_str());
        }
        fprintf(f, "\n");
    }
}

// The targets of part (b): on each workload, pnp/single at most kSparseTarget over every
// storage.
std::vector<Target> pnp_sparse_targets(const PnpSection &s)
{
    const Report &rep = *s.sparse;
    std::vector<Target> out;
    for (const Row &row : rep.rows()) {
        Target t;
        t.what = "pnp (b) " + row.name + fmt(": pnp/single <= %.2f", kSparseTarget);
        bool missed = false, missing = false;
        for (const char *st : kPnpStorages) {
            double m, sp, sn;
            std::string why;
            bool has = sparse_cell(rep, row, st, m, sp, sn, why);
            t.figure += (t.figure.empty() ? "" : ", ") + std::string(st) + " " +
                        (has ? fmt("%.3f±%.0f%%", m, sp) : why);
            missed = missed || (has && m > kSparseTarget);
            missing = missing || !has;
        }
        t.verdict = missed ? "missed" : missing ? "no figure" : "met";
        out.push_back(t);
    }
    return out;
}

void print_pnp_memory(FILE *f, const PnpSection &s, bool legend)
{
    const Report &rep = *s.memory;
    const std::vector<Engine> &en = rep.engines();
    if (!legend)
        fprintf(f, "\npnp (c): memory at the peak of a gather, every peer with 4 receives "
                   "pending\n");
    else
        fprintf(
            f,
            "\npnp (c): memory at the peak of a gather whose every peer has m = 4 receives "
            "pending (all\nposted before the first message arrives).  bytes: vmatch_stats "
            "bytes (the baselines' bytes())\nwhen the most entries were queued; x ob1: bytes / "
            "ob1's bytes; B/entry: (bytes - bytes of the\nempty engine) / entries; queues: "
            "vmatch_stats queues (ob1: two lists per peer seen and one\nwildcard list; ucx: "
            "two tables of 1024 buckets, the wildcard queue and the list of all\nunexpected "
            "messages); B/queue: bytes / queues; partners and levels after the replay;\nhash: "
            "policy=hash over llv (issue 12 judges its bytes at N = 4096 against ucx's).\n"
            "Baselines count what matching adds beyond MPI's request objects "
            "(bench/baseline_*.cc).\n\n");
    fprintf(f, "  %-15s %-12s %8s %11s %7s %8s %7s %9s %8s %6s\n", "workload", "engine",
            "entries", "bytes", "x ob1", "B/entry", "queues", "B/queue", "partners", "levels");
    size_t ob1 = find_engine(rep, "ob1");
    for (const Row &row : rep.rows()) {
        double ob1_bytes =
            ob1 < en.size() && row.cells[ob1].ok ? (double)row.cells[ob1].m.bytes_peak : NAN;
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = row.cells[i];
            std::string bad = cell_problem(c);
            if (!bad.empty()) {
                fprintf(f, "  %-15s %-12s %s %s\n", row.name.c_str(), en[i].label.c_str(),
                        bad.c_str(), c.error.c_str());
                continue;
            }
            std::string part =
                c.has_end ? fmt("%llu", (unsigned long long)c.end_partners) : "-";
            std::string lev = c.has_end ? fmt("%llu", (unsigned long long)c.end_levels) : "-";
            fprintf(f, "  %-15s %-12s %8llu %11llu %7.2f %8.1f %7llu %9.0f %8s %6s\n",
                    row.name.c_str(), en[i].label.c_str(), (unsigned long long)c.m.max_pending,
                    (unsigned long long)c.m.bytes_peak, (double)c.m.bytes_peak / ob1_bytes,
                    bytes_per_entry(c), (unsigned long long)c.m.queues_peak,
                    c.m.queues_peak ? (double)c.m.bytes_peak / (double)c.m.queues_peak : NAN,
                    part.c_str(), lev.c_str());
        }
    }
}

} // namespace

void print_pnp_section(FILE *f, const PnpSection &s, bool legend)
{
    if (legend) // the terminal has had the section's progress lines
        fprintf(f, "\n== pnp: partner / non-partner queues\n");
    print_pnp_gather(f, s, legend);
    print_pnp_sparse(f, s, legend);
    print_pnp_memory(f, s, legend);
    if (legend) {
        fprintf(f, "\npnp engines:\n");
        std::vector<std::string> shown;
        for (const Report *r : {s.gather.get(), s.sparse.get(), s.memory.get()})
            for (const Engine &e : r->engines()) {
                std::string line = fmt("  %-23s %s\n", e.label.c_str(), e.resolved.c_str());
                if (e.base || std::find(shown.begin(), shown.end(), line) != shown.end())
                    continue;
                shown.push_back(line);
                fputs(line.c_str(), f);
            }
    }
    // Once each: an engine left out of two parts (hash, on a build without it) says so once.
    for (size_t i = 0; i < s.notes.size(); i++)
        if (std::find(s.notes.begin(), s.notes.begin() + (long)i, s.notes[i]) ==
            s.notes.begin() + (long)i)
            fprintf(f, "note: %s\n", s.notes[i].c_str());
}

std::vector<Target> pnp_targets(const PnpSection &s)
{
    std::vector<Target> t = pnp_gather_targets(s), b = pnp_sparse_targets(s);
    t.insert(t.end(), b.begin(), b.end());
    return t;
}

std::vector<Workload> pnp_sparse_workloads()
{
    return std::vector<Workload>(kPnpSparse,
                                 kPnpSparse + sizeof kPnpSparse / sizeof *kPnpSparse);
}

std::vector<Workload> pnp_memory_workloads(const Options &o)
{
    std::vector<Workload> w(kPnpMemory, kPnpMemory + sizeof kPnpMemory / sizeof *kPnpMemory);
    if (o.full)
        w.insert(w.end(), kPnpFullMemory,
                 kPnpFullMemory + sizeof kPnpFullMemory / sizeof *kPnpFullMemory);
    return w;
}

void list_pnp_workloads(FILE *f, const Options &o)
{
    fprintf(f, "pnp section (engines: vmatch_report --help):\n");
    auto show = [f](const Workload *w, size_t n) {
        for (size_t i = 0; i < n; i++)
            fprintf(f, "  %-30s %s\n", w[i].name, w[i].spec);
    };
    show(kPnpGathers, sizeof kPnpGathers / sizeof *kPnpGathers);
    if (o.full)
        show(kPnpFullGathers, sizeof kPnpFullGathers / sizeof *kPnpFullGathers);
    show(kPnpSparse, sizeof kPnpSparse / sizeof *kPnpSparse);
    show(kPnpMemory, sizeof kPnpMemory / sizeof *kPnpMemory);
    if (o.full)
        show(kPnpFullMemory, sizeof kPnpFullMemory / sizeof *kPnpFullMemory);
}

} // namespace vmr
