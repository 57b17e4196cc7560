/*
 * mc-abstract.pml - bench/mc-abstract.conf in Promela, for the SPIN
 * cross-check of ksmkit check's state count (bench/spin-crosscheck).
 *
 * Page p holds its initial value V(p) (1, 1, 2) with the last value written
 * at offset 0 on top, or is unmapped. Writing a page's own initial value at
 * offset 0 leaves its bytes as they were, so the content is the base value
 * plus the last write unless that write restored it: c[p] = 0 is the page
 * as initially filled, 1..3 means "value w written", UNMAPPED is gone. Each
 * action is one d_step, as each is one step of the checker; the process
 * rests at the loop head between actions. Unmapping frees the page's frame
 * onto the simulator's free list, whose order decides which frame id the
 * next allocation gets, so it is state too (no symmetry reduction): the
 * free list is top (1 + page, or 0) and below[] (what follows each).
 */
#define UNMAPPED 9

#define V(p) (p == 2 -> 2 : 1) /* initial values: 1, 1, 2 */

byte c[3];
byte writes = 4;
byte unmaps = 2;
byte top;          /* free list head: 1 + the page whose frame was freed last */
byte below[3];     /* the next entry after page p's frame */

inline write(p, w)
{
	d_step { writes > 0 && c[p] != UNMAPPED -> c[p] = (w == V(p) -> 0 : w); writes-- }
}

inline unmap(p)
{
	d_step { unmaps > 0 && c[p] != UNMAPPED -> c[p] = UNMAPPED; unmaps--; below[p] = top; top = p + 1 }
}

active proctype user()
{
end:
	do
	:: write(0, 1) :: write(0, 2) :: write(0, 3)
	:: write(1, 1) :: write(1, 2) :: write(1, 3)
	:: write(2, 1) :: write(2, 2) :: write(2, 3)
	:: unmap(0) :: unmap(1) :: unmap(2)
	od
}
