# Nai Xia's experiment made small for a qemu guest, whose soft-dirty bits
# say which pages a PTE dirty-bit detector would find written in each scan
# interval (docs/benchmarks.md, nai-xia): 4 MiB memset to 1, then a writer
# of fresh 8-byte values near the end of every page in turn, 20,000 a
# second (what a TCG guest keeps up with), for 10 s. kernel = 6.1 is the
# guest's kernel: no smart scan, so every scan visits every page, in the
# guest and in the simulator alike.
#
#   ksmkit run --guest nodes=1 --soft-dirty sd.csv bench/nai-xia-guest.wl
#   ksmkit sim --csv bench/nai-xia-guest.wl      # add detector = dirty
#
# Not deterministic (continuous writer, stop by time).

[global]
description = Nai Xia 2011, small, for a guest's soft-dirty capture
time = 10s
kernel = 6.1
pages_to_scan = 256
sleep_millisecs = 20

[region area]
size = 4m
fill = same
value = 0x0101010101010101

[writer scribble]
region = area
pages = all
offset = random:4000-4088
value = fresh
when = continuous
rate = 20000/s
