// report_memory.cc -- the memory section of vmatch_report (issue 26): every library engine's
// bytes when created, at the peak of a burst, once the burst drained, and after quiet
// traffic that follows it, beside the MPICH-, ob1- and UCX-style baselines and the compact
// peers of the headline (ob1-compact, ucx-compact).
//
// A burst queues one entry for each of P - 1 sources x 4 tags in a random order (receives
// first: posted; or messages first: unexpected) and matches them in another random order;
// quiet traffic is then 50 000 exact pairs on 8 sources (a receive and its message, which
// comes first switching every 100 pairs).  Every engine gets the same calls, and every
// match is checked: an engine that matched wrongly fails the report.  The figures are
// vmatch_stats().bytes (the baselines' own count: entries and tables, for ucx without the
// tag, mask and user data that UCX keeps in its request), measured once: no spread.
#include "baseline.h"
#include "report_sections.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <unistd.h>

namespace vmr
{
namespace
{

const int kTags = 4, kQuietPairs = 50000, kQuietSources = 8;
const double kPerEntryBound = 1.5;   // default / single+llv and / ucx, bytes per entry at peak
const uint64_t kQuietBound = 16384;  // default engine after the burst and quiet traffic
const uint64_t kCreatedBound = 8192; // pnp, pnp-static and cluster with nprocs = 1024

struct Case {
    const char *name;
    uint32_t peers; // P: sources 1 .. P - 1
    bool unexpected;
};
const Case kCases[] = {{"posted P=1024", 1024, false},
                       {"unexpected P=1024", 1024, true},
                       {"posted P=4096", 4096, false}};

// The match bits of (source, tag) in context 1, with the default layout (vmatch's and the
// baselines': make_instance hands every engine that layout).
uint64_t bits_of(uint32_t src, uint32_t tag)
{
    const vmb::Layout l;
    return 1ull << (l.tag_bits + l.src_bits) | (uint64_t)src << l.tag_bits | tag;
}

// A handle that says which (source, tag) it was queued for: matches are checked by it.
void *handle(uint32_t src, uint32_t tag, bool msg)
{
    return (void *)(uintptr_t)(((uint64_t)src << 20 | tag << 1 | msg) + 16);
}

// A receive (msg false) or a message for (src, tag) on backend b: it must queue (take
// false), or take the other side's entry for the same (src, tag) (take true).
bool call(const vm_wl_backend_t &b, uint32_t src, uint32_t tag, bool msg, bool take)
{
    void *out = nullptr;
    uint64_t bits = bits_of(src, tag);
    int rc = msg ? b.arrive(b.self, bits, 0, handle(src, tag, true), &out)
                 : b.post(b.self, bits, ~0ull, 0, handle(src, tag, false), &out);
    return take ? rc == VMATCH_MATCHED && out == handle(src, tag, !msg) : rc == VMATCH_QUEUED;
}

uint64_t bytes(const vm_wl_backend_t &b)
{
    vm_wl_sample_t s{};
    b.sample(b.self, &s);
    return s.bytes;
}

// The burst of case c on b, then the quiet pairs; the figures into cell.  False when a match
// was wrong.
bool measure(const vm_wl_backend_t &b, const Case &c, MemCell &cell)
{
    uint32_t n = (c.peers - 1) * kTags;
    std::vector<uint32_t> order(n);
    std::mt19937_64 rng(c.peers);
    bool ok = true;
    for (int pass = 0; pass < 2 && ok; pass++) {
        std::iota(order.begin(), order.end(), 0u);
        std::shuffle(order.begin(), order.end(), rng);
        bool msg = pass == 0 ? c.unexpected : !c.unexpected;
        for (uint32_t i = 0; i < n && ok; i++)
            ok = call(b, 1 + order[i] / kTags, order[i] % kTags, msg, pass == 1);
        if (pass == 0)
            cell.peak = bytes(b);
    }
    cell.entries = n;
    cell.drained = bytes(b);
    for (int i = 0; i < kQuietPairs && ok; i++) {
        uint32_t src = (uint32_t)(i % kQuietSources), tag = (uint32_t)(i % 3);
        bool msg_first = (i / 100) % 2;
        ok = call(b, src, tag, msg_first, false) && call(b, src, tag, !msg_first, true);
    }
    cell.quiet = bytes(b);
    return ok;
}

// A profile of case c's traffic for pnp-static and cluster, recorded on kRecorderSpec: its
// path, or "" (note says why).
std::string record_profile(const Case &c, const vm_trace_t &t, std::string &note)
{
    Engine rec;
    rec.spec = kRecorderSpec;
    std::string why;
    std::unique_ptr<Instance> in = make_instance(rec, t, why);
    MemCell scratch;
    if (!in || !measure(in->b, c, scratch)) {
        note = "profile: " + (in ? std::string("a wrong match while recording") : why);
        return "";
    }
    const char *tmp = getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/vmatch-memory-XXXXXX";
    int fd = mkstemp(path.data());
    if (fd < 0 || close(fd) != 0 || vmatch_profile_save(in->e, path.c_str()) != VMATCH_OK) {
        note =
            fmt("profile: %s", fd < 0 ? "cannot make a temporary file" : vmatch_last_error());
        if (fd >= 0)
            unlink(path.c_str());
        return "";
    }
    return path;
}

// The engines: library specs (nprocs comes from the case: make_instance), profiled ones
// reading a profile recorded from the same burst, then the baselines.
const std::vector<SectionSpec> kSpecs = {{"hash (default)", "", false},
                                         {"single+llv", "policy=single storage=llv", false},
                                         {"single+lla", "policy=single storage=lla", false},
                                         {"single+ll", "policy=single storage=ll", false},
                                         {"pnp", "policy=pnp", false},
                                         {"pnp c=46", "policy=pnp pnp.cap=46", false},
                                         {"pnp-static", "policy=pnp-static", true},
                                         {"cluster", "policy=cluster", true},
                                         {"unified", "policy=unified", false},
                                         {"mpich", nullptr, false},
                                         {"ob1", nullptr, false},
                                         {"ucx", nullptr, false},
                                         // The compact peers (the headline's): their node
                                         // pools, tables and per-source arrays.
                                         {kOb1CompactLabel, nullptr, false},
                                         {kUcxCompactLabel, nullptr, false}};

} // namespace

MemorySection run_memory_section(const Options &o)
{
    MemorySection m;
    section_line(o, "== memory section: bytes created, at the peak of a burst, drained, and "
                    "after quiet traffic");
    std::vector<Engine> engines = section_engines("memory", kSpecs, m.notes);
    for (const Engine &en : engines)
        m.rows.push_back({en.label, en.resolved, en.base != nullptr || en.inl != nullptr, {}});
    for (const Case &c : kCases) {
        m.cases.push_back(c.name);
        vm_trace_t t;
        vm_trace_init(&t);
        t.nprocs = c.peers;
        std::string note, profile = record_profile(c, t, note);
        if (!note.empty())
            m.notes.push_back(note);
        for (size_t i = 0; i < engines.size(); i++) {
            MemCell cell;
            std::unique_ptr<Instance> in;
            if (engines[i].profiled && profile.empty())
                cell.error = "no profile";
            else if (!(in = make_instance(engines[i], t, cell.error, profile)))
                cell.error = cell.error.empty() ? "not made" : cell.error;
            if (in) {
                cell.created = bytes(in->b);
                cell.ran = true;
                cell.wrong = !measure(in->b, c, cell);
            }
            m.rows[i].cells.push_back(cell);
        }
        if (!profile.empty())
            unlink(profile.c_str());
        vm_trace_free(&t);
    }
    m.ran = true;
    return m;
}

void print_memory_section(FILE *f, const MemorySection &m, bool legend)
{
    if (!m.ran)
        return;
    fprintf(f, "\nmemory: bytes held (vmatch_stats; the baselines' own count)\n");
    if (legend)
        fprintf(f,
                "A burst queues one entry per source 1 .. P-1 and tag 0 .. 3 in a random "
                "order (posted: receives; unexpected: messages), then matches them in "
                "another; quiet: then %d exact pairs on %d sources.  created: the engine "
                "before its first call; B/entry: bytes at the peak / entries; drained: "
                "after the burst; quiet: after the quiet pairs.  One pass: no spread.\n",
                kQuietPairs, kQuietSources);
    fprintf(f, "%-15s %8s", "engine", "created");
    for (const std::string &c : m.cases)
        fprintf(f, " | %-30s", c.c_str());
    fprintf(f, "\n%-15s %8s", "", "");
    for (size_t k = 0; k < m.cases.size(); k++)
        fprintf(f, " | %8s %10s %10s", "B/entry", "drained", "quiet");
    fprintf(f, "\n");
    for (const MemRow &row : m.rows) {
        const MemCell &c0 = row.cells.front();
        fprintf(f, "%-15s %8s", row.label.c_str(),
                c0.ran ? fmt("%llu", (unsigned long long)c0.created).c_str() : "-");
        for (const MemCell &c : row.cells) {
            if (!c.ran)
                fprintf(f, " | %-30.30s", c.error.c_str());
            else
                fprintf(f, " | %8.1f %10llu %10llu%s", (double)c.peak / c.entries,
                        (unsigned long long)c.drained, (unsigned long long)c.quiet,
                        c.wrong ? " WRONG" : "");
        }
        fprintf(f, "\n");
    }
    if (legend) {
        for (const MemRow &row : m.rows)
            if (!row.baseline)
                fprintf(f, "  %-15s %s\n", row.label.c_str(), row.spec.c_str());
        for (const std::string &n : m.notes)
            fprintf(f, "note: %s\n", n.c_str());
    }
}

std::vector<Target> memory_targets(const MemorySection &m)
{
    std::vector<Target> out;
    if (!m.ran)
        return out;
    auto row = [&](const std::string &label) -> const MemRow * {
        for (const MemRow &r : m.rows)
            if (r.label == label)
                return &r;
        return nullptr;
    };
    const MemRow *def = row("hash (default)");
    for (const char *other : {"single+llv", "ucx"}) {
        Target t;
        t.what = fmt("memory: default engine, bytes per entry at the peak <= %.1f x %s's",
                     kPerEntryBound, other);
        const MemRow *o = row(other);
        bool missed = false, missing = !def || !o;
        for (size_t k = 0; !missing && k < m.cases.size(); k++) {
            const MemCell &a = def->cells[k], &b = o->cells[k];
            if (!a.ran || !b.ran || a.wrong || b.wrong) {
                missing = true;
                break;
            }
            double r = ((double)a.peak / a.entries) / ((double)b.peak / b.entries);
            missed |= r > kPerEntryBound;
            t.figure += fmt("%s%s %.2f (%.1f / %.1f)", k ? ", " : "", m.cases[k].c_str(), r,
                            (double)a.peak / a.entries, (double)b.peak / b.entries);
        }
        t.verdict = verdict(missed, missing);
        out.push_back(t);
    }
    Target q;
    q.what = fmt("memory: default engine after a burst and quiet traffic <= %llu bytes",
                 (unsigned long long)kQuietBound);
    bool qmiss = false, qnone = !def;
    for (size_t k = 0; def && k < m.cases.size(); k++) {
        const MemCell &a = def->cells[k];
        qnone |= !a.ran || a.wrong;
        qmiss |= a.ran && a.quiet > kQuietBound;
        q.figure +=
            fmt("%s%s %llu", k ? ", " : "", m.cases[k].c_str(), (unsigned long long)a.quiet);
    }
    q.verdict = verdict(qmiss, qnone);
    out.push_back(q);
    Target c;
    c.what = fmt("memory: pnp, pnp-static and cluster created with nprocs=1024 <= %llu bytes",
                 (unsigned long long)kCreatedBound);
    bool cmiss = false, cnone = false;
    for (const char *label : {"pnp", "pnp c=46", "pnp-static", "cluster"}) {
        const MemRow *r = row(label);
        bool ran = r && r->cells[0].ran; // case 0 has P = 1024
        cnone |= !ran;
        cmiss |= ran && r->cells[0].created > kCreatedBound;
        c.figure +=
            fmt("%s%s %s", c.figure.empty() ? "" : ", ", label,
                ran ? fmt("%llu", (unsigned long long)r->cells[0].created).c_str() : "not run");
    }
    c.verdict = verdict(cmiss, cnone);
    out.push_back(c);
    return out;
}

} // namespace vmr
