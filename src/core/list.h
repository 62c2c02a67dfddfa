/* list.h -- an intrusive doubly-linked list: a vm_link_t inside each element, a vm_list_t
 * holding the two ends.
 *
 * The ll storage's nodes, the blocks of lla and llv (blocklist.h) and the pool's slabs are
 * each linked this way.  Everything is static inline: ll and the block lists unlink on every
 * match, and a call there would cost more than the four stores it makes.  An element reaches
 * its own struct from its link with a cast when the link is its first member (ll, blocks),
 * or with VM_CONTAINER_OF.
 */
#ifndef VM_LIST_H
#define VM_LIST_H

#include <stddef.h>

/* The struct of type `type` whose member `member` is at ptr. */
#define VM_CONTAINER_OF(ptr, type, member)                                                     \
    ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

typedef struct vm_link {
    struct vm_link *next, *prev; /* NULL at the ends */
} vm_link_t;

typedef struct vm_list {
    vm_link_t *head, *tail; /* both NULL when empty */
} vm_list_t;

/* Append n at the tail of l.
 * l: the list; n: an element in no list (its links are overwritten). */
static inline void vm_list_push_tail(vm_list_t *l, vm_link_t *n)
{
    n->next = NULL;
    n->prev = l->tail;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
}

/* Take n out of l.  Its own links are left as they were (callers free or relink it).
 * l: the list; n: an element of l. */
static inline void vm_list_unlink(vm_list_t *l, vm_link_t *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
}

#endif
