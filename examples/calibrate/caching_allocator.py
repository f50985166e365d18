"""PyTorch's CUDA caching allocator, replayed on a recorded stream of allocations and frees.

torch.cuda.max_memory_reserved() is the most memory the caching allocator held from the driver: the allocated
peak plus what sat cached and free inside its segments at that moment. It depends only on the sizes and order of
the requests, and on the allocator's rules, so replaying a step's stream (recorded on any machine) through those
rules gives what a GPU reserves for it. The rules, from c10/cuda/CUDACachingAllocator.cpp with its defaults
(no PYTORCH_CUDA_ALLOC_CONF, one stream):
- every request is rounded up to 512 bytes;
- requests up to 1 MiB come from the small pool, carved from 2 MiB segments; larger ones from the large pool,
  carved from 20 MiB segments below 10 MiB and from a segment of their own size, rounded up to 2 MiB, above;
- a request takes the smallest free block of its pool that holds it (best fit), and splits it when what is left is
  at least 512 bytes (small pool) or more than 1 MiB (large pool);
- a freed block merges with free neighbours in its segment; segments are kept, never handed back, unless a
  cudaMalloc fails (not modelled: the replay has no capacity).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20
SMALL_BUFFER = 2 << 20
LARGE_BUFFER = 20 << 20
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20


def round_size(size: int) -> int:
    return max(MIN_BLOCK, -(-size // MIN_BLOCK) * MIN_BLOCK)


def segment_size(size: int) -> int:
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-size // ROUND_LARGE) * ROUND_LARGE


@dataclass
class Block:
    address: int
    size: int
    small: bool
    free: bool = True
    prev: Block | None = None
    next: Block | None = None


@dataclass
class CachingAllocator:
    reserved: int = 0
    allocated: int = 0
    peak_reserved: int = 0
    peak_allocated: int = 0
    # Free blocks of each pool, sorted by (size, address) as the allocator's std::set orders them.
    _free: dict = field(default_factory=lambda: {True: [], False: []})
    _used: dict = field(default_factory=dict)  # address -> block in use
    _cached: dict = field(default_factory=dict)  # address -> free block
    _next_address: int = 0

    def malloc(self, size: int) -> int:
        size = round_size(size)
        small = size <= SMALL_SIZE
        pool = self._free[small]
        i = bisect.bisect_left(pool, (size, -1))
        if i < len(pool):
            _, address = pool.pop(i)
            block = self._cached.pop(address)
        else:
            block = self._new_segment(segment_size(size), small)
        remaining = block.size - size
        if remaining >= MIN_BLOCK if small else remaining > SMALL_SIZE:
            rest = Block(block.address + size, remaining, small, True, block, block.next)
            if block.next:
                block.next.prev = rest
            block.next, block.size = rest, size
            self._release(rest)
        block.free = False
        self._used[block.address] = block
        self.allocated += block.size
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return block.address

    def free(self, address: int) -> None:
        block = self._used.pop(address)
        self.allocated -= block.size
        for neighbour in (block.prev, block.next):
            if neighbour and neighbour.free:
                self._free[block.small].remove((neighbour.size, neighbour.address))
                del self._cached[neighbour.address]
                first, second = (neighbour, block) if neighbour is block.prev else (block, neighbour)
                first.size += second.size
                first.next = second.next
                if second.next:
                    second.next.prev = first
                block = first
        self._release(block)

    def _release(self, block: Block) -> None:
        block.free = True
        bisect.insort(self._free[block.small], (block.size, block.address))
        self._cached[block.address] = block

    def _new_segment(self, size: int, small: bool) -> Block:
        self.reserved += size
        self.peak_reserved = max(self.peak_reserved, self.reserved)
        block = Block(self._next_address, size, small)
        self._next_address += size + ROUND_LARGE  # segments are apart: blocks never merge across them
        return block


def replay(requests) -> CachingAllocator:
    """Replays (key, bytes) pairs in order: a positive size allocates under key, a negative one frees it."""
    allocator = CachingAllocator()
    live: dict = {}
    for key, nbytes in requests:
        if nbytes > 0:
            live[key] = allocator.malloc(nbytes)
        elif key in live:  # a free of memory allocated before the recording began is not the replay's
            allocator.free(live.pop(key))
    return allocator


def main() -> None:
    """Replays a JSON list of [key, bytes] pairs from standard input and prints what the allocator held."""
    import json
    import sys

    try:
        requests = [(key, int(nbytes)) for key, nbytes in json.load(sys.stdin)]
    except (ValueError, TypeError) as error:
        sys.exit(f"caching_allocator.py: standard input is not a JSON list of [key, bytes] pairs ({error}); "
                 "e.g. [[1, 4096], [1, -1]] allocates 4096 bytes under key 1, then frees them")
    allocator = replay(requests)
    print(json.dumps({
        "peakReservedBytes": allocator.peak_reserved, "peakAllocatedBytes": allocator.peak_allocated,
        "reservedBytes": allocator.reserved, "allocatedBytes": allocator.allocated,
    }))


if __name__ == "__main__":
    main()
