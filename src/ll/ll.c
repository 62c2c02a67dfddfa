/* ll.c -- storage=ll: a doubly-linked list of entries, as MPICH's CH4 receive queues.
 *
 * This is the baseline every benchmark compares against, so it stays an honest list: one
 * node per entry, walked pointer by pointer, nothing a real MPI list would not have.  Nodes
 * come from the engine's pool like MPICH's requests come from its handle pool.
 */
#include "list.h"
#include "module.h"

typedef struct vm_ll_node {
    vm_link_t link;           /* first: a node is found from its link by a cast */
    vmatch_bits_t bits, care; /* care is all ones on the UMQ */
    void *payload;
    uint64_t seq;
} vm_ll_node_t;
_Static_assert(offsetof(vm_ll_node_t, link) == 0, "a node is its list link");

typedef struct vm_ll {
    vm_queue_t base;
    vm_list_t nodes; /* of vm_ll_node_t, oldest first */
    vm_pool_t *pool;
} vm_ll_t;

extern const vm_storage_t vm_ll_storage;

/* The node of list link n, or NULL. */
static inline vm_ll_node_t *ll_node(vm_link_t *n)
{
    return (vm_ll_node_t *)n;
}

/* The node after n in its queue, or NULL. */
static inline vm_ll_node_t *ll_next(const vm_ll_node_t *n)
{
    return ll_node(n->link.next);
}

static int ll_create(vm_env_t *env, int side, vm_queue_t **out)
{
    vm_pool_t *pool = vm_env_pool(env, sizeof(vm_ll_node_t));
    vm_ll_t *l = pool ? vm_mem_alloc(&env->mem, sizeof *l) : NULL;
    if (!l)
        return VMATCH_ENOMEM;
    *l = (vm_ll_t){.base = {.ops = &vm_ll_storage, .env = env, .side = side}, .pool = pool};
    *out = &l->base;
    return VMATCH_OK;
}

static void ll_destroy(vm_queue_t *q)
{
    vm_ll_t *l = (vm_ll_t *)q;
    for (vm_ll_node_t *n = ll_node(l->nodes.head), *next; n; n = next) {
        next = ll_next(n);
        vm_pool_put(l->pool, n);
    }
    vm_mem_free(&q->env->mem, l, sizeof *l);
}

static int ll_append(vm_queue_t *q, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                     uint64_t seq)
{
    vm_ll_t *l = (vm_ll_t *)q;
    vm_ll_node_t *n = vm_pool_get(l->pool);
    if (!n)
        return VMATCH_ENOMEM;
    *n = (vm_ll_node_t){.bits = bits,
                        .payload = payload,
                        .seq = seq,
                        .care = q->side == VM_PRQ ? care : ~(vmatch_bits_t)0};
    vm_list_push_tail(&l->nodes, &n->link);
    q->len++;
    return VMATCH_OK;
}

/* The first node that matches (find's rules), or NULL. */
static inline vm_ll_node_t *ll_first(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t keycare,
                                     uint64_t *inspected)
{
    uint64_t seen = 0;
    vm_ll_node_t *n = ll_node(((vm_ll_t *)q)->nodes.head);
    if (q->side == VM_PRQ) {
        for (; n; n = ll_next(n)) {
            seen++;
            if (((key ^ n->bits) & n->care) == 0)
                break;
        }
    } else {
        for (; n; n = ll_next(n)) {
            seen++;
            if (((n->bits ^ key) & keycare) == 0)
                break;
        }
    }
    *inspected += seen;
    return n;
}

static void ll_unlink(vm_queue_t *q, vm_ll_node_t *n)
{
    vm_ll_t *l = (vm_ll_t *)q;
    vm_list_unlink(&l->nodes, &n->link);
    vm_pool_put(l->pool, n);
    q->len--;
}

static int ll_found(vm_ll_node_t *n, vm_hit_t *hit)
{
    *hit = (vm_hit_t){.payload = n->payload, .seq = n->seq, .where = n};
    return 1;
}

static int ll_find(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t keycare, vm_hit_t *hit,
                   uint64_t *inspected)
{
    vm_ll_node_t *n = ll_first(q, key, keycare, inspected);
    return n ? ll_found(n, hit) : 0;
}

static int ll_take(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t keycare, void **payload,
                   uint64_t *inspected)
{
    vm_ll_node_t *n = ll_first(q, key, keycare, inspected);
    if (!n)
        return 0;
    *payload = n->payload;
    ll_unlink(q, n);
    return 1;
}

static int ll_find_payload(vm_queue_t *q, const void *payload, vm_hit_t *hit,
                           uint64_t *inspected)
{
    uint64_t seen = 0;
    vm_ll_node_t *n = ll_node(((vm_ll_t *)q)->nodes.head);
    for (; n; n = ll_next(n)) {
        seen++;
        if (n->payload == payload)
            break;
    }
    *inspected += seen;
    return n ? ll_found(n, hit) : 0;
}

static void ll_remove(vm_queue_t *q, const vm_hit_t *hit)
{
    ll_unlink(q, hit->where);
}

static void ll_each(vm_queue_t *q, vm_each_fn *fn, void *arg)
{
    for (vm_ll_node_t *n = ll_node(((vm_ll_t *)q)->nodes.head); n; n = ll_next(n))
        if (fn(arg, n->bits, n->care, n->payload, n->seq))
            return;
}

const vm_storage_t vm_ll_storage = {.name = "ll", VM_STORAGE_CALLS(ll), .take = ll_take};

static const vm_storage_t *const ll_storages[] = {&vm_ll_storage, NULL};

const vm_module_t vm_ll_module = {.storages = ll_storages};
