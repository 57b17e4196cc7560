/*
 * sim_rbtree.h - red-black trees over array-indexed nodes, shaped exactly
 * like the kernel's lib/rbtree.c.
 *
 * KSM's trees are compared by memcmp of pages that may change under them (the
 * unstable tree) or vanish from them (stale stable nodes), so which nodes a
 * walk meets depends on the tree's shape. This module reproduces the kernel's
 * shapes: the same insert fix-up cases and rotations, the same erase (a node
 * with two children is replaced by its successor, the leftmost node of its
 * right subtree) and the same rebalancing, plus rb_replace_node. Nodes live in
 * caller-owned arrays and are named by 32-bit ids (0 is "no node"); a tree is
 * described by where its links live (base, stride, offset), so one
 * implementation serves both the unstable tree (links inside rmap items) and
 * the stable trees (links inside stable nodes). Pure functions of their
 * arguments: no global state.
 */
#ifndef KSMKIT_SIM_RBTREE_H
#define KSMKIT_SIM_RBTREE_H

#include <stddef.h>
#include <stdint.h>

#define RB_NIL 0u

/*
 * The links of one node: 12 bytes, packed, the colour in the parent's word
 * (like the kernel's __rb_parent_color), so that the owner can put its own
 * bytes right after them (an rmap_item keeps its seqnr, tree and walk
 * there). Node ids are below RB_MAX_ID.
 */
struct rb_links {
	uint32_t parent : 31; /* RB_NIL for the root */
	uint32_t black : 1;   /* 1 black, 0 red */
	uint32_t left, right;
} __attribute__((packed));

#define RB_MAX_ID (UINT32_C(1) << 31)

/* Where the links of node id live: base + id * stride + offset. */
struct rb_layout {
	char *base;
	size_t stride;
	size_t offset;
};

static inline struct rb_links *rb_at(const struct rb_layout *l, uint32_t id)
{
	return (struct rb_links *)(l->base + (size_t)id * l->stride + l->offset);
}

/*
 * Link @node as the @left (1) or right (0) child of @parent (RB_NIL: as the
 * root) and rebalance. *root is updated.
 */
void rb_insert(const struct rb_layout *l, uint32_t *root, uint32_t node, uint32_t parent,
	       int left);

/* Remove @node from the tree and rebalance. */
void rb_erase(const struct rb_layout *l, uint32_t *root, uint32_t node);

/* Put @new in @old's place (same links and colour); @old leaves the tree. */
void rb_replace(const struct rb_layout *l, uint32_t *root, uint32_t old, uint32_t new);

/* First node in order, or RB_NIL. */
uint32_t rb_first(const struct rb_layout *l, uint32_t root);

#endif
