/*
 * sim_rbtree.c - the kernel's red-black tree algorithm on array-indexed nodes.
 *
 * Written from the published algorithm of lib/rbtree.c so that the same
 * sequence of inserts and erases leaves the same shape and colours as in the
 * kernel: insert fix-up by uncle colour (recolour, or one or two rotations),
 * erase by splicing out a node with at most one child or replacing it with
 * its in-order successor, then the four-case colour repair. See the header
 * for why the shape matters to KSM.
 */
#include "sim_rbtree.h"

#define RED 0
#define BLACK 1

static uint32_t parent_of(const struct rb_layout *l, uint32_t n)
{
	return rb_at(l, n)->parent;
}

static int is_black(const struct rb_layout *l, uint32_t n)
{
	return n == RB_NIL || rb_at(l, n)->black;
}

static void set_parent_colour(const struct rb_layout *l, uint32_t n, uint32_t parent, int colour)
{
	struct rb_links *x = rb_at(l, n);

	x->parent = parent;
	x->black = (uint8_t)colour;
}

/* In @parent (or the root), make @new the child that @old was. */
static void change_child(const struct rb_layout *l, uint32_t *root, uint32_t old, uint32_t new,
			 uint32_t parent)
{
	if (parent == RB_NIL) {
		*root = new;
		return;
	}
	if (rb_at(l, parent)->left == old)
		rb_at(l, parent)->left = new;
	else
		rb_at(l, parent)->right = new;
}

/* @new takes @old's parent and colour; @old hangs below @new with @colour. */
static void rotate_set_parents(const struct rb_layout *l, uint32_t *root, uint32_t old,
			       uint32_t new, int colour)
{
	uint32_t parent = parent_of(l, old);

	rb_at(l, new)->parent = parent;
	rb_at(l, new)->black = rb_at(l, old)->black;
	set_parent_colour(l, old, new, colour);
	change_child(l, root, old, new, parent);
}

/* Fix-up when @parent is red and the left child of @gparent. */
static int insert_fix_left(const struct rb_layout *l, uint32_t *root, uint32_t *node,
			   uint32_t *parent, uint32_t gparent)
{
	uint32_t uncle = rb_at(l, gparent)->right, tmp;

	if (uncle != RB_NIL && !rb_at(l, uncle)->black) {
		set_parent_colour(l, uncle, gparent, BLACK);
		set_parent_colour(l, *parent, gparent, BLACK);
		*node = gparent;
		*parent = parent_of(l, gparent);
		set_parent_colour(l, gparent, *parent, RED);
		return 1; /* continue upwards */
	}
	tmp = rb_at(l, *parent)->right;
	if (*node == tmp) {
		/* node is an inner grandchild: rotate it above its parent first */
		tmp = rb_at(l, *node)->left;
		rb_at(l, *parent)->right = tmp;
		rb_at(l, *node)->left = *parent;
		if (tmp != RB_NIL)
			set_parent_colour(l, tmp, *parent, BLACK);
		set_parent_colour(l, *parent, *node, RED);
		*parent = *node;
		tmp = rb_at(l, *node)->right;
	}
	rb_at(l, gparent)->left = tmp;
	rb_at(l, *parent)->right = gparent;
	if (tmp != RB_NIL)
		set_parent_colour(l, tmp, gparent, BLACK);
	rotate_set_parents(l, root, gparent, *parent, RED);
	return 0;
}

/* The mirror image: @parent is the right child of @gparent. */
static int insert_fix_right(const struct rb_layout *l, uint32_t *root, uint32_t *node,
			    uint32_t *parent, uint32_t gparent)
{
	uint32_t uncle = rb_at(l, gparent)->left, tmp;

	if (uncle != RB_NIL && !rb_at(l, uncle)->black) {
		set_parent_colour(l, uncle, gparent, BLACK);
		set_parent_colour(l, *parent, gparent, BLACK);
		*node = gparent;
		*parent = parent_of(l, gparent);
		set_parent_colour(l, gparent, *parent, RED);
		return 1;
	}
	tmp = rb_at(l, *parent)->left;
	if (*node == tmp) {
		tmp = rb_at(l, *node)->right;
		rb_at(l, *parent)->left = tmp;
		rb_at(l, *node)->right = *parent;
		if (tmp != RB_NIL)
			set_parent_colour(l, tmp, *parent, BLACK);
		set_parent_colour(l, *parent, *node, RED);
		*parent = *node;
		tmp = rb_at(l, *node)->left;
	}
	rb_at(l, gparent)->right = tmp;
	rb_at(l, *parent)->left = gparent;
	if (tmp != RB_NIL)
		set_parent_colour(l, tmp, gparent, BLACK);
	rotate_set_parents(l, root, gparent, *parent, RED);
	return 0;
}

void rb_insert(const struct rb_layout *l, uint32_t *root, uint32_t node, uint32_t parent,
	       int left)
{
	struct rb_links *n = rb_at(l, node);

	n->parent = parent;
	n->black = RED;
	n->left = n->right = RB_NIL;
	if (parent == RB_NIL)
		*root = node;
	else if (left)
		rb_at(l, parent)->left = node;
	else
		rb_at(l, parent)->right = node;

	for (;;) {
		uint32_t gparent;

		if (parent == RB_NIL) {
			set_parent_colour(l, node, RB_NIL, BLACK);
			return;
		}
		if (rb_at(l, parent)->black)
			return;
		gparent = parent_of(l, parent);
		if (parent != rb_at(l, gparent)->right) {
			if (!insert_fix_left(l, root, &node, &parent, gparent))
				return;
		} else if (!insert_fix_right(l, root, &node, &parent, gparent)) {
			return;
		}
	}
}

/*
 * Colour repair after erase, for a black deficit below @parent on the side of
 * @node (RB_NIL on the first round). Returns 1 to continue one level up.
 */
static int erase_fix_left(const struct rb_layout *l, uint32_t *root, uint32_t *node,
			  uint32_t *parent)
{
	uint32_t sibling = rb_at(l, *parent)->right, near, far;

	if (!rb_at(l, sibling)->black) {
		near = rb_at(l, sibling)->left;
		rb_at(l, *parent)->right = near;
		rb_at(l, sibling)->left = *parent;
		set_parent_colour(l, near, *parent, BLACK);
		rotate_set_parents(l, root, *parent, sibling, RED);
		sibling = near;
	}
	far = rb_at(l, sibling)->right;
	if (is_black(l, far)) {
		near = rb_at(l, sibling)->left;
		if (is_black(l, near)) {
			set_parent_colour(l, sibling, *parent, RED);
			if (!rb_at(l, *parent)->black) {
				rb_at(l, *parent)->black = BLACK;
				return 0;
			}
			*node = *parent;
			*parent = parent_of(l, *node);
			return *parent != RB_NIL;
		}
		far = rb_at(l, near)->right;
		rb_at(l, sibling)->left = far;
		rb_at(l, near)->right = sibling;
		rb_at(l, *parent)->right = near;
		if (far != RB_NIL)
			set_parent_colour(l, far, sibling, BLACK);
		far = sibling;
		sibling = near;
	}
	near = rb_at(l, sibling)->left;
	rb_at(l, *parent)->right = near;
	rb_at(l, sibling)->left = *parent;
	set_parent_colour(l, far, sibling, BLACK);
	if (near != RB_NIL)
		rb_at(l, near)->parent = *parent;
	rotate_set_parents(l, root, *parent, sibling, BLACK);
	return 0;
}

static int erase_fix_right(const struct rb_layout *l, uint32_t *root, uint32_t *node,
			   uint32_t *parent)
{
	uint32_t sibling = rb_at(l, *parent)->left, near, far;

	if (!rb_at(l, sibling)->black) {
		near = rb_at(l, sibling)->right;
		rb_at(l, *parent)->left = near;
		rb_at(l, sibling)->right = *parent;
		set_parent_colour(l, near, *parent, BLACK);
		rotate_set_parents(l, root, *parent, sibling, RED);
		sibling = near;
	}
	far = rb_at(l, sibling)->left;
	if (is_black(l, far)) {
		near = rb_at(l, sibling)->right;
		if (is_black(l, near)) {
			set_parent_colour(l, sibling, *parent, RED);
			if (!rb_at(l, *parent)->black) {
				rb_at(l, *parent)->black = BLACK;
				return 0;
			}
			*node = *parent;
			*parent = parent_of(l, *node);
			return *parent != RB_NIL;
		}
		far = rb_at(l, near)->left;
		rb_at(l, sibling)->right = far;
		rb_at(l, near)->left = sibling;
		rb_at(l, *parent)->left = near;
		if (far != RB_NIL)
			set_parent_colour(l, far, sibling, BLACK);
		far = sibling;
		sibling = near;
	}
	near = rb_at(l, sibling)->right;
	rb_at(l, *parent)->left = near;
	rb_at(l, sibling)->right = *parent;
	set_parent_colour(l, far, sibling, BLACK);
	if (near != RB_NIL)
		rb_at(l, near)->parent = *parent;
	rotate_set_parents(l, root, *parent, sibling, BLACK);
	return 0;
}

static void erase_colour(const struct rb_layout *l, uint32_t *root, uint32_t parent)
{
	uint32_t node = RB_NIL;

	for (;;) {
		int more = node != rb_at(l, parent)->right
				   ? erase_fix_left(l, root, &node, &parent)
				   : erase_fix_right(l, root, &node, &parent);
		if (!more)
			return;
	}
}

/* Splice out a node with two children by moving its successor into place. */
static uint32_t erase_with_successor(const struct rb_layout *l, uint32_t *root, uint32_t node)
{
	struct rb_links *n = rb_at(l, node);
	uint32_t child = n->right, successor = child, parent, child2, tmp;
	uint8_t node_black = n->black, successor_black;

	tmp = rb_at(l, child)->left;
	if (tmp == RB_NIL) {
		parent = successor;
		child2 = rb_at(l, successor)->right;
	} else {
		do {
			parent = successor;
			successor = tmp;
			tmp = rb_at(l, tmp)->left;
		} while (tmp != RB_NIL);
		child2 = rb_at(l, successor)->right;
		rb_at(l, parent)->left = child2;
		rb_at(l, successor)->right = child;
		rb_at(l, child)->parent = successor;
	}
	tmp = n->left;
	rb_at(l, successor)->left = tmp;
	rb_at(l, tmp)->parent = successor;
	change_child(l, root, node, successor, n->parent);
	successor_black = rb_at(l, successor)->black;
	rb_at(l, successor)->parent = n->parent;
	rb_at(l, successor)->black = node_black;
	if (child2 != RB_NIL) {
		set_parent_colour(l, child2, parent, BLACK);
		return RB_NIL;
	}
	return successor_black ? parent : RB_NIL;
}

void rb_erase(const struct rb_layout *l, uint32_t *root, uint32_t node)
{
	struct rb_links *n = rb_at(l, node);
	uint32_t child = n->right, left = n->left, rebalance = RB_NIL;

	if (left == RB_NIL) {
		change_child(l, root, node, child, n->parent);
		if (child != RB_NIL)
			set_parent_colour(l, child, n->parent, n->black);
		else if (n->black)
			rebalance = n->parent;
	} else if (child == RB_NIL) {
		set_parent_colour(l, left, n->parent, n->black);
		change_child(l, root, node, left, n->parent);
	} else {
		rebalance = erase_with_successor(l, root, node);
	}
	if (rebalance != RB_NIL)
		erase_colour(l, root, rebalance);
}

void rb_replace(const struct rb_layout *l, uint32_t *root, uint32_t old, uint32_t new)
{
	struct rb_links *o = rb_at(l, old), *n = rb_at(l, new);

	change_child(l, root, old, new, o->parent);
	if (o->left != RB_NIL)
		rb_at(l, o->left)->parent = new;
	if (o->right != RB_NIL)
		rb_at(l, o->right)->parent = new;
	*n = *o;
}

uint32_t rb_first(const struct rb_layout *l, uint32_t root)
{
	uint32_t n = root;

	if (n == RB_NIL)
		return RB_NIL;
	while (rb_at(l, n)->left != RB_NIL)
		n = rb_at(l, n)->left;
	return n;
}
