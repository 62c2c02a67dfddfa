// rank_load.cc -- vmatch_rank's input: the traces of one run (read, checked against each
// other, their ranks), the pattern of --profiles, and the candidates of the ranking.
#include "rank.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace vrk
{

using vmr::fmt;

namespace
{

std::string layout_text(const vmb::Layout &l)
{
    return fmt("%u/%u/%u", l.ctx_bits, l.src_bits, l.tag_bits);
}

// The largest source a trace names, or -1.
int64_t max_source(const vm_trace_t &t)
{
    int64_t m = -1;
    for (size_t i = 0; i < t.n; i++)
        if (t.ops[i].kind != VM_TRACE_CANCEL && t.ops[i].kind != VM_TRACE_REMOVE)
            m = std::max<int64_t>(m, t.ops[i].src);
    return m;
}

// "FILE (rank R)" for messages; "(from its position)" when the trace has no `rank` line.
std::string who(const RankTrace &r)
{
    return fmt("%s (rank %lld%s)", r.path.c_str(), (long long)r.rank,
               r.rank_declared ? "" : ", from its position: it has no `rank` line");
}

// Agreement on nprocs and layout: the first trace that declares one sets it; another value
// is an error naming both files.
bool agree(std::vector<RankTrace> &tr, RunShape &shape, std::string &err)
{
    const RankTrace *np_by = nullptr, *lay_by = nullptr;
    for (RankTrace &r : tr) {
        if (r.t.has_layout) {
            vmb::Layout l;
            l.ctx_bits = r.t.ctx_bits;
            l.src_bits = r.t.src_bits;
            l.tag_bits = r.t.tag_bits;
            if (lay_by && layout_text(l) != layout_text(shape.layout)) {
                err = fmt("the traces disagree on the layout: %s says %s (ctx/src/tag bits), "
                          "%s says %s: they are not of one run",
                          lay_by->path.c_str(), layout_text(shape.layout).c_str(),
                          r.path.c_str(), layout_text(l).c_str());
                return false;
            }
            shape.layout = l;
            shape.layout_declared = true;
            lay_by = &r;
        }
        if (r.t.nprocs) {
            if (np_by && r.t.nprocs != shape.nprocs) {
                err = fmt("the traces disagree on nprocs: %s says %u, %s says %u: they are "
                          "not of one run",
                          np_by->path.c_str(), shape.nprocs, r.path.c_str(), r.t.nprocs);
                return false;
            }
            shape.nprocs = r.t.nprocs;
            shape.nprocs_declared = true;
            np_by = &r;
        }
    }
    return true;
}

// Distinct ranks below nprocs.
bool check_ranks(const std::vector<RankTrace> &tr, const RunShape &shape, std::string &err)
{
    std::map<int64_t, const RankTrace *> seen;
    for (const RankTrace &r : tr) {
        auto it = seen.find(r.rank);
        if (it != seen.end()) {
            err = "two traces of the same rank: " + who(*it->second) + " and " + who(r);
            return false;
        }
        seen[r.rank] = &r;
        if (shape.nprocs_declared && r.rank >= (int64_t)shape.nprocs) {
            err = fmt("%s: rank %lld is not below nprocs %u", r.path.c_str(), (long long)r.rank,
                      shape.nprocs);
            return false;
        }
    }
    return true;
}

// The words key=value of a spec, last value of a key winning.
std::map<std::string, std::string> spec_keys(const std::string &spec)
{
    std::map<std::string, std::string> kv;
    std::istringstream ss(spec);
    std::string w;
    while (ss >> w) {
        size_t eq = w.find('=');
        kv[w.substr(0, eq)] = eq == std::string::npos ? "" : w.substr(eq + 1);
    }
    return kv;
}

// Keys the ports set themselves (MPICH refuses them in its CVAR) or that record rather than
// design: left out of the spec to use.
bool run_key(const std::string &k)
{
    for (const char *p : {"layout", "nprocs", "rank", "profile", "trace"})
        if (k == p || k.rfind(std::string(p) + ".", 0) == 0)
            return true;
    return false;
}

// spec without run_key words, and without profile= (kept apart in prof).
std::string design_of(const std::string &spec, std::string *prof)
{
    std::istringstream ss(spec);
    std::string w, out;
    while (ss >> w) {
        std::string k = w.substr(0, w.find('='));
        if (k == "profile" && prof)
            *prof = w.substr(w.find('=') + 1);
        if (!run_key(k))
            out += (out.empty() ? "" : " ") + w;
    }
    return out;
}

// The library designs, as data (section_engines leaves out, with a note, what this build
// or machine refuses).  profiled: reads a profile recorded from the same rank's trace.
const std::vector<vmr::SectionSpec> kDesigns = {
    {"hash", vmr::kHashSpec, false},
    {vmr::kHashInlineLabel, nullptr, false},
    {"single+ll", "policy=single storage=ll", false},
    {"single+lla", "policy=single storage=lla", false},
    {"single+llv", "policy=single storage=llv", false},
    {"pnp", "policy=pnp storage=llv", false},
    {"pnp-static", "policy=pnp-static storage=llv", true},
    {"cluster", "policy=cluster storage=llv", true},
    {"unified", "policy=unified storage=llv", false},
};
// The peers: the shipped libraries' designs, called per operation and compiled into the loop,
// and their algorithms with compact nodes (what a new library would write), in the loop.
const std::vector<vmr::SectionSpec> kPeers = {
    {"mpich", nullptr, false},
    {"ob1", nullptr, false},
    {"ucx", nullptr, false},
    {"ob1-inl", nullptr, false},
    {"ucx-inl", nullptr, false},
    // The same algorithms written compactly (baseline_*_compact.h), inline as well.
    {vmr::kOb1CompactLabel, nullptr, false},
    {vmr::kUcxCompactLabel, nullptr, false},
};

} // namespace

bool load_traces(const Options &o, std::vector<RankTrace> &tr, RunShape &shape,
                 std::vector<std::string> &notes, std::string &err)
{
    tr.resize(o.traces.size());
    for (size_t i = 0; i < o.traces.size(); i++) {
        RankTrace &r = tr[i];
        r.path = o.traces[i];
        vm_trace_init(&r.t);
        char e[1024];
        if (vm_trace_load(&r.t, r.path.c_str(), e, sizeof e) < 0) {
            // The reader's message names the file (and the line when it is malformed).
            err = e;
            return false;
        }
        if (r.t.n == 0) {
            err = r.path + ": the trace has no operations (a header alone): nothing to rank";
            return false;
        }
        r.rank_declared = r.t.rank >= 0;
        r.rank = r.rank_declared ? r.t.rank : (int64_t)i;
    }
    if (!agree(tr, shape, err) || !check_ranks(tr, shape, err))
        return false;
    if (!shape.nprocs_declared) {
        // No trace says: the engines get the largest source or rank + 1 (pnp and unified
        // bound their queues by it).
        int64_t m = 0;
        const RankTrace *by = &tr[0];
        for (const RankTrace &r : tr)
            if (std::max(max_source(r.t) + 1, r.rank + 1) > m) {
                m = std::max(max_source(r.t) + 1, r.rank + 1);
                by = &r;
            }
        // Past the bound of the nprocs key no engine can be made for the run; say that,
        // not that a clamped nprocs is too small for the source.
        if (m > (1 << 30)) {
            err = fmt("%s: source or rank %lld, and no trace declares nprocs: a run of more "
                      "than 2^30 = %d processes, more than vmatch takes (the spec's nprocs)",
                      by->path.c_str(), (long long)(m - 1), 1 << 30);
            return false;
        }
        shape.nprocs = (uint32_t)m;
        notes.push_back(fmt("no trace declares nprocs: the engines get nprocs=%u (the largest "
                            "source or rank + 1)",
                            shape.nprocs));
    }
    for (RankTrace &r : tr) {
        char e[1024];
        bool had = r.t.nprocs != 0;
        // Every trace gets the run's nprocs and layout, so that vm_wl_engine_spec makes each
        // rank's engines in the run's shape (a trace without the lines is of the same run).
        r.t.nprocs = shape.nprocs;
        if (shape.layout_declared) {
            r.t.has_layout = 1;
            r.t.ctx_bits = shape.layout.ctx_bits;
            r.t.src_bits = shape.layout.src_bits;
            r.t.tag_bits = shape.layout.tag_bits;
        }
        if (!had && vm_trace_check(&r.t, e, sizeof e) < 0) {
            err = r.path + ": with the run's nprocs " + std::to_string(shape.nprocs) + ": " + e;
            return false;
        }
        if (r.t.cut)
            notes.push_back(fmt("%s: the recording stopped at its cap (trace.cap): %llu "
                                "operations were not recorded; the ranking covers the %zu "
                                "recorded ones",
                                who(r).c_str(), (unsigned long long)r.t.cut, r.t.n));
        else if (!r.t.ended)
            notes.push_back(r.path + ": no `end` line: the trace may have been cut short "
                                     "(traces the library writes end with one)");
    }
    // The layout is the recording engine's, which vmatch took; a hand-made one may not be.
    char buf[256];
    vmatch_engine_t *e = nullptr;
    int rc = vmatch_create(vm_wl_engine_spec(&tr[0].t, "", buf, sizeof buf), &e);
    if (rc < 0) {
        err = fmt("the traces' layout %s (ctx/src/tag bits) with nprocs %u: %s (%s)",
                  layout_text(shape.layout).c_str(), shape.nprocs, vmatch_strerror(rc),
                  vmatch_last_error());
        return false;
    }
    vmatch_destroy(e);
    return true;
}

bool needs_profile(const std::string &spec)
{
    std::map<std::string, std::string> kv = spec_keys(spec);
    auto p = kv.find("policy");
    return p != kv.end() && (p->second == "pnp-static" || p->second == "cluster") &&
           !kv.count("profile");
}

std::string profile_path(const std::string &pattern, int64_t rank)
{
    std::string out;
    for (size_t i = 0; i < pattern.size(); i++)
        if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'r')
            out += std::to_string(rank), i++;
        else
            out += pattern[i];
    return out;
}

bool check_pattern(const std::string &pattern, size_t ranks, std::string &why)
{
    bool has_r = false;
    for (size_t i = 0; i < pattern.size(); i++) {
        if (isspace((unsigned char)pattern[i])) {
            why = "a blank cannot be part of a spec's value";
            return false;
        }
        if (pattern[i] == '%') {
            if (i + 1 >= pattern.size() || pattern[i + 1] != 'r') {
                why = "the only % it may hold is %r (the rank)";
                return false;
            }
            has_r = true;
        }
    }
    if (pattern.empty() || (ranks > 1 && !has_r)) {
        why = "it needs %r (the rank), or every rank would read one file";
        return false;
    }
    return true;
}

bool make_candidates(const Options &o, const std::vector<RankTrace> &tr,
                     std::vector<Candidate> &cands, std::vector<std::string> &notes,
                     std::string &err)
{
    // Every engine is made with vm_wl_engine_spec, which puts the run's nprocs and layout
    // (load_traces gave them to every trace) in front of its spec: hash-inl is the default
    // engine, with nothing of its own.
    std::string why;
    if (!vmr::set_inline_spec("", why)) {
        err = "the default engine: " + why;
        return false;
    }
    std::vector<vmr::SectionSpec> designs;
    for (const vmr::SectionSpec &d : kDesigns)
        if (o.designs.empty() ||
            ("," + o.designs + ",").find("," + std::string(d.label) + ",") != std::string::npos)
            designs.push_back(d);
    if (designs.empty()) {
        err = "--designs '" + o.designs + "' names none of the library designs";
        return false;
    }
    for (const vmr::Engine &en : vmr::section_engines("ranking", designs, notes)) {
        Candidate c;
        c.en = en;
        c.design = en.inl ? vmr::kHashSpec : en.spec;
        c.dflt = en.inl || en.spec == vmr::kHashSpec; // hash-inl is the default engine too
        cands.push_back(c);
    }
    std::string def, hash;
    if (vmr::check_spec("", def, why) && vmr::check_spec(vmr::kHashSpec, hash, why) &&
        def != hash)
        notes.push_back(fmt("the library's default engine here is \"%s\", not %s", def.c_str(),
                            vmr::kHashSpec));
    for (size_t i = 0; i < o.specs.size(); i++) {
        Candidate c;
        c.en.label = fmt("spec%zu", i + 1);
        c.design = design_of(o.specs[i], &c.user_prof);
        // Run keys the --spec gives (nprocs, layout) are the user's: they stay in its spec.
        const std::string &spec = o.specs[i];
        c.en.profiled = needs_profile(spec) || !c.user_prof.empty();
        std::string own = spec;
        if (!c.user_prof.empty()) { // profile=PATH: read per rank (%r), not as written
            std::istringstream ss(spec);
            std::string w;
            own.clear();
            while (ss >> w)
                if (w.rfind("profile=", 0) != 0)
                    own += (own.empty() ? "" : " ") + w;
        }
        // Profiles of the application's run name it, not vmatch_rank, as their program.
        if (!c.user_prof.empty())
            own += " profile.program=any";
        c.en.spec = own;
        std::string probe = c.en.spec;
        if (c.en.profiled)
            probe +=
                " profile=" +
                (c.user_prof.empty() ? tr[0].profile : profile_path(c.user_prof, tr[0].rank));
        vmatch_engine_t *e = nullptr;
        char buf[2048];
        int rc = vmatch_create(vm_wl_engine_spec(&tr[0].t, probe.c_str(), buf, sizeof buf), &e);
        if (rc < 0) {
            err = fmt("--spec \"%s\": %s (%s)", o.specs[i].c_str(), vmatch_strerror(rc),
                      vmatch_last_error());
            return false;
        }
        c.en.resolved = vmatch_describe(e);
        vmatch_destroy(e);
        cands.push_back(c);
    }
    for (const vmr::Engine &en : vmr::section_engines("ranking", kPeers, notes)) {
        Candidate c;
        c.en = en;
        c.peer = true;
        cands.push_back(c);
    }
    return true;
}

} // namespace vrk
