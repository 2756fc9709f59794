"""Write a deterministic text corpus: SIZE bytes of pseudo-words from a seeded generator.

    corpus PATH SIZE_BYTES SEED

Words and their order come from the seed alone, so every environment compresses the same bytes
(the paper used the 1 GB enwik9 Wikipedia dump, which cannot be shipped). Standard library only.
"""

import random
import sys


def main(path, size, seed):
    rng = random.Random(seed)
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [12, 9, 8, 8, 7, 7, 6, 6, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
    words = ["".join(rng.choices(letters, weights, k=rng.randint(1, 10))) for _ in range(20000)]
    written = 0
    with open(path, "w") as out:
        while written < size:
            line = " ".join(rng.choices(words, k=rng.randint(5, 16))) + ".\n"
            line = line[: size - written]
            out.write(line)
            written += len(line)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
