// report_memory.cc -- the memory section of vmatch_report (issue 26): every library engine's
// bytes when created, at the peak of a burst, once the burst drained, and after quiet
// traffic that follows it, beside the MPICH-, ob1- and UCX-style baselines.
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

// A library engine as a baseline, so that both run the same code here.
class VmatchQueue final : public vmb::Baseline
{
  public:
    explicit VmatchQueue(vmatch_engine_t *e) : e_(e) {}
    ~VmatchQueue() override { vmatch_destroy(e_); }
    int post(uint64_t bits, uint64_t care, void *req, void **msg_out) override
    {
        return vmatch_post(e_, bits, care, 0, req, msg_out);
    }
    int arrive(uint64_t bits, void *msg, void **req_out) override
    {
        return vmatch_arrive(e_, bits, 0, msg, req_out);
    }
    int probe(uint64_t bits, uint64_t care, int remove, void **msg_out) override
    {
        return vmatch_probe(e_, bits, care, 0, remove, msg_out);
    }
    int cancel(void *req) override { return vmatch_cancel(e_, req); }
    int remove_unexpected(void *msg) override { return vmatch_remove_unexpected(e_, msg); }
    uint64_t inspected() const override { return stats().inspected; }
    uint64_t bytes() const override { return stats().bytes; }
    uint64_t queues() const override { return stats().queues; }

  private:
    vmatch_stats_t stats() const
    {
        vmatch_stats_t st;
        vmatch_stats(e_, &st);
        return st;
    }
    vmatch_engine_t *e_;
};

// The match bits of (source, tag) in context 1, with the default layout (vmatch's and the
// baselines').
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

struct Shuffle {
    uint64_t s;
    uint32_t below(uint32_t n)
    {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return (uint32_t)(((s >> 32) * n) >> 32);
    }
};

// Queue one entry on q's side (a receive, or a message); on a match, check it.
bool put(vmb::Baseline &q, uint32_t src, uint32_t tag, bool msg)
{
    void *out = nullptr;
    uint64_t b = bits_of(src, tag);
    int rc = msg ? q.arrive(b, handle(src, tag, true), &out)
                 : q.post(b, ~0ull, handle(src, tag, false), &out);
    return rc == VMATCH_QUEUED || (rc == VMATCH_MATCHED && out == handle(src, tag, !msg));
}

bool take(vmb::Baseline &q, uint32_t src, uint32_t tag, bool msg)
{
    void *out = nullptr;
    uint64_t b = bits_of(src, tag);
    int rc = msg ? q.arrive(b, handle(src, tag, true), &out)
                 : q.post(b, ~0ull, handle(src, tag, false), &out);
    return rc == VMATCH_MATCHED && out == handle(src, tag, !msg);
}

// The figures of one engine on one case; false when a match was wrong.
bool measure(vmb::Baseline &q, const Case &c, MemCell &cell)
{
    uint32_t n = (c.peers - 1) * kTags;
    std::vector<uint32_t> order(n);
    Shuffle r{c.peers};
    bool ok = true;
    for (int pass = 0; pass < 2 && ok; pass++) {
        for (uint32_t i = 0; i < n; i++)
            order[i] = i;
        for (uint32_t i = n - 1; i > 0; i--)
            std::swap(order[i], order[r.below(i + 1)]);
        bool msg = pass == 0 ? c.unexpected : !c.unexpected;
        for (uint32_t i = 0; i < n && ok; i++)
            ok = pass == 0 ? put(q, 1 + order[i] / kTags, order[i] % kTags, msg)
                           : take(q, 1 + order[i] / kTags, order[i] % kTags, msg);
        if (pass == 0)
            cell.peak = q.bytes();
    }
    cell.entries = n;
    cell.drained = q.bytes();
    for (int i = 0; i < kQuietPairs && ok; i++) {
        uint32_t src = (uint32_t)(i % kQuietSources), tag = (uint32_t)(i % 3);
        bool msg_first = (i / 100) % 2;
        ok = put(q, src, tag, msg_first) && take(q, src, tag, !msg_first);
    }
    cell.quiet = q.bytes();
    return ok;
}

// A profile of the case's traffic for pnp-static and cluster: a recording engine replays its
// burst.  The path, or "" (note says why).
std::string record_profile(const Case &c, std::string &note)
{
    vmatch_engine_t *e = nullptr;
    std::string spec = fmt("policy=single profile.record=on nprocs=%u", c.peers);
    if (vmatch_create(spec.c_str(), &e) != VMATCH_OK) {
        note = fmt("profile: %s", vmatch_last_error());
        return "";
    }
    VmatchQueue q(e);
    MemCell scratch;
    measure(q, c, scratch);
    char dir[] = "/tmp/vmatch-memory-XXXXXX";
    if (!mkdtemp(dir)) {
        note = "profile: cannot make a temporary folder";
        return "";
    }
    std::string path = std::string(dir) + "/profile";
    if (vmatch_profile_save(e, path.c_str()) != VMATCH_OK) {
        note = fmt("profile: %s", vmatch_last_error());
        return "";
    }
    return path;
}

// The library engines: label and spec (%u: the case's process count; @: with its profile).
const struct {
    const char *label, *spec;
} kSpecs[] = {{"hash (default)", ""},
              {"single+llv", "policy=single storage=llv"},
              {"single+lla", "policy=single storage=lla"},
              {"single+ll", "policy=single storage=ll"},
              {"pnp", "policy=pnp nprocs=%u"},
              {"pnp c=46", "policy=pnp nprocs=%u pnp.cap=46"},
              {"pnp-static", "policy=pnp-static nprocs=%u @"},
              {"cluster", "policy=cluster nprocs=%u @"},
              {"unified", "policy=unified nprocs=%u"}};

std::string spec_for(const char *tmpl, const Case &c, const std::string &profile)
{
    std::string s = fmt(tmpl, c.peers);
    size_t at = s.find('@');
    if (at != std::string::npos)
        s.replace(at, 1, "profile=" + profile);
    return s;
}

} // namespace

MemorySection run_memory_section(const Options &o)
{
    MemorySection m;
    section_line(o, "== memory section: bytes created, at the peak of a burst, drained, and "
                    "after quiet traffic");
    for (const Case &c : kCases)
        m.cases.push_back(c.name);
    std::vector<std::string> profiles;
    for (const Case &c : kCases) {
        std::string note;
        profiles.push_back(record_profile(c, note));
        if (!note.empty())
            m.notes.push_back(note);
    }
    for (const auto &s : kSpecs)
        m.rows.push_back({s.label, "", false, {}});
    for (const vmb::BaselineInfo &b : vmb::baselines())
        if (std::string(b.name) != "fuzzy")
            m.rows.push_back({b.name, "", true, {}});
    for (size_t k = 0; k < std::size(kCases); k++) {
        const Case &c = kCases[k];
        for (size_t i = 0; i < m.rows.size(); i++) {
            MemRow &row = m.rows[i];
            MemCell cell;
            std::unique_ptr<vmb::Baseline> q;
            if (row.baseline) {
                for (const vmb::BaselineInfo &b : vmb::baselines())
                    if (row.label == b.name)
                        q = b.make(vmb::Layout{}, c.peers);
            } else {
                std::string spec = spec_for(kSpecs[i].spec, c, profiles[k]);
                vmatch_engine_t *e = nullptr;
                if (spec.find("profile=") != std::string::npos && profiles[k].empty())
                    cell.error = "no profile";
                else if (vmatch_create(spec.c_str(), &e) != VMATCH_OK)
                    cell.error = vmatch_last_error();
                else
                    q = std::make_unique<VmatchQueue>(e);
                if (k == 0)
                    row.spec = spec.empty() ? "(default)" : spec;
            }
            if (q) {
                cell.created = q->bytes();
                cell.ran = true;
                cell.wrong = !measure(*q, c, cell);
            }
            row.cells.push_back(cell);
        }
    }
    for (const std::string &p : profiles)
        if (!p.empty()) {
            unlink(p.c_str());
            rmdir(p.substr(0, p.rfind('/')).c_str());
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
