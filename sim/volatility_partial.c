/*
 * volatility_partial.c - partial hashing, in the spirit of UKSM: a page is
 * judged by a checksum over a sample of its 512 words, and how much of the
 * page is sampled follows how far the page has earned trust: a page the
 * sample is proven wrong about is hashed whole again, a page that stays
 * unchanged is sampled ever more sparsely.
 *
 * Why. The kernel hashes all 4 KiB of every page that is not KSM at every
 * visit, although most of those pages never change again. A write changes
 * one 8-byte word, or two, so a sample sees it only when it lands in the
 * sample: a sample alone calls such a page stable while its bytes change (a
 * false stable). The page then goes into the unstable tree, costs tree walks
 * and may be merged only to be broken by its next write (the merge itself
 * stays safe: it compares the bytes). So the sample must learn which pages
 * it misjudges, and it can learn only from what it sees: the whole page now
 * and then. The merge cannot teach it: its memcmp compares the bytes as they
 * are, so a page merged right after a write the sample missed merges
 * correctly (and in the simulator, where a step is atomic, that memcmp never
 * fails after a search found the same bytes).
 *
 * The rule. Each item has a trust t from 0 to 3 and the whole page's
 * checksum at the last visit that read the whole page (its audit).
 *  - t = 0: every visit reads the whole page and compares its checksum with
 *    the last one: the kernel's rule exactly. New items start here, so the
 *    first two visits are the kernel's (checksum 0 stored, then the real one).
 *  - t > 0: a visit hashes a sample: 32 words (one every 128 bytes) at t = 1,
 *    16 words (one every 256 bytes) from t = 2, the words at multiples of the
 *    stride, so a sample holds the sparser ones' words; the hash is the low
 *    32 bits of xxh64 (seed 0) over them in address order. Every 2^t-th visit
 *    since the last audit is an audit again: it reads the whole page instead
 *    of the sample.
 *  - An audit, or a t = 0 visit, that finds the page unchanged since the
 *    last audit raises t by one (at most 3): the next sample is sparser and
 *    the next audit further away (every 2nd, 4th, then 8th visit).
 *  - Any change drops t to 0 and is called volatile: a sample that sees one
 *    (a changed sampled word is a changed page) reads the whole page at once
 *    for the next visit to compare with; an audit that finds the page
 *    changed although no sample since the last audit saw it has caught a
 *    missed write, the misjudgement this design learns from. Hashing whole a
 *    page known to change is cheap insurance: a false stable costs tree walks
 *    worth several page hashes (tree_level_ns a level).
 * So a page written every scan is judged as by the kernel, and an idle page
 * costs 16 sampled words on seven visits of eight. Samples change size only
 * when the whole page has just been read, so the sample at the new size is
 * taken then at no cost and the next visit compares like with like.
 *
 * Costs: a sampled word costs sample_word_ns (a cache line of its own,
 * fetched from memory: sim.h) and is counted in sim_work.sampled_words; a
 * whole page checksum_ns, counted in sim_work.checksums. There is no sample
 * of 64 words, one a cache line: it would read every line of the page, cost
 * about what the page does and see an eighth of it.
 *
 * Its mistakes, against the bytes (the scan loop knows the truth: did the
 * page's content change since the item's last visit?), in struct sim_work:
 *  - false stable: a change the sample did not see, until the next audit
 *    proves it (at most 2^t - 1 visits later: 7 at t = 3; never at t = 0);
 *  - false volatile: an audit that proves a missed change made before the
 *    previous visit calls the page volatile although it has not changed
 *    since that visit.
 * A sample never calls a page volatile wrongly by itself (hash collisions
 * aside, as for the kernel's checksum).
 *
 * Not as UKSM: UKSM samples random word positions and adapts one strength
 * for all pages from an estimate of costs and benefits; here the positions
 * are a fixed stride (reproducible, and nested from size to size) and the
 * strength is each page's. A fixed stride has blind spots, words only the
 * whole page covers; the audits are what finds writes there. With
 * use_zero_pages a page is a candidate when its last sample (or checksum) is
 * the zero page's (the merge then compares the bytes). The constants below
 * are the design's, not tunables of the workload.
 */
#include "sim_detector.h"

#include <string.h>
#include <xxhash.h>

#define TRUST_MAX 3u            /* audits every 2^3 = 8 visits at most */
#define SPARSEST_SAMPLE 16u     /* words sampled from trust 2 on; 32 at trust 1 */
#define PAGE_WORDS (CONTENT_PAGE_SIZE / CONTENT_WORD_SIZE)

/* The detector's state of one rmap_item (sim_detector_item()), zeroed new. */
struct partial_item {
	uint32_t sample;   /* trust > 0: the sample's hash at the last visit */
	uint32_t audited;  /* the page's checksum when last read whole (0: never) */
	uint8_t trust;     /* 0 to TRUST_MAX */
	uint8_t visits;    /* visits since the page was last read whole */
	uint8_t pad[2];
};

_Static_assert(sizeof(struct partial_item) == 12, "the partial detector's item grew");

/* Words sampled at @trust (> 0). */
static unsigned sample_words(unsigned trust)
{
	return trust == 1 ? 2 * SPARSEST_SAMPLE : SPARSEST_SAMPLE;
}

/* The hash of @content's sample at @trust (> 0), without charging. */
static uint32_t sample_hash(const struct sim *s, uint64_t content, unsigned trust)
{
	unsigned n = sample_words(trust), stride = PAGE_WORDS / n;
	uint8_t bytes[2 * SPARSEST_SAMPLE * CONTENT_WORD_SIZE], word[CONTENT_WORD_SIZE];
	struct sim_patch_byte buf[SIM_PATCH_VIEW];
	const struct sim_patch_byte *patch;
	uint64_t base;
	uint32_t npatch = sim_content_patches(&s->content, content, &base, buf, &patch);

	content_value_bytes(base, word);
	for (unsigned i = 0; i < n; i++)
		memcpy(bytes + i * CONTENT_WORD_SIZE, word, CONTENT_WORD_SIZE);
	for (uint32_t k = 0; k < npatch; k++) {
		unsigned w = patch[k].offset / CONTENT_WORD_SIZE;

		if (w % stride == 0)
			bytes[w / stride * CONTENT_WORD_SIZE + patch[k].offset % CONTENT_WORD_SIZE] =
				patch[k].byte;
	}
	return (uint32_t)XXH64(bytes, (size_t)n * CONTENT_WORD_SIZE, 0);
}

/* Read the whole page: its checksum, charged. */
static uint32_t read_whole(struct sim *s, uint32_t slot, uint32_t frame)
{
	s->work.checksums++;
	sim_charge(s, s->cfg.costs.checksum_ns);
	return sim_frame_checksum(s, slot, frame);
}

/* Hash the page's sample at the item's trust, charged. */
static uint32_t read_sample(struct sim *s, uint32_t frame, unsigned trust)
{
	s->work.sampled_words += sample_words(trust);
	sim_charge(s, sample_words(trust) * s->cfg.costs.sample_word_ns);
	return sample_hash(s, s->frame[frame].content, trust);
}

/* The page was just read whole, with checksum @page: compare, then learn. */
static bool judge_whole(struct sim *s, struct partial_item *it, uint32_t frame, uint32_t page)
{
	bool changed = page != it->audited;

	it->audited = page;
	it->visits = 0;
	if (changed)
		it->trust = 0;
	else if (it->trust < TRUST_MAX)
		it->trust++;
	if (it->trust) /* the sample at the new size, from the page just read */
		it->sample = sample_hash(s, s->frame[frame].content, it->trust);
	return changed;
}

static bool partial_changed(struct sim *s, uint32_t slot, uint32_t frame)
{
	struct partial_item *it = sim_detector_item(s, slot);

	if (it->trust == 0 || ++it->visits >= 1u << it->trust)
		return judge_whole(s, it, frame, read_whole(s, slot, frame));
	if (read_sample(s, frame, it->trust) == it->sample)
		return false;
	/* seen: volatile, and trusted no more; the page read whole for the next visit */
	judge_whole(s, it, frame, read_whole(s, slot, frame));
	it->trust = 0;
	return true;
}

static bool partial_zero_candidate(struct sim *s, uint32_t slot, uint32_t frame)
{
	const struct partial_item *it = sim_detector_item(s, slot);

	(void)frame;
	if (it->trust == 0)
		return it->audited == s->zero_checksum;
	return it->sample == sample_hash(s, 0, it->trust);
}

const struct sim_detector_ops sim_volatility_partial = {
	.item_bytes = sizeof(struct partial_item),
	.page_changed = partial_changed,
	.zero_candidate = partial_zero_candidate,
};
