import time
# four identical 256 KiB buffers, a zeroed one, and one that changes each phase
same = [bytearray(b'ksm!' * (65536)) for _ in range(4)]
zero = bytearray(262144)
vol = bytearray(262144)
for phase in range(1, 12):
    for i in range(0, len(vol), 4096 * phase):
        vol[i] = phase & 0xff
    if phase == 4:
        same[3][0:4096] = b'\x01' * 4096
    time.sleep(0.25)
