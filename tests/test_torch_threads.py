"""torch's thread count is process-wide: overlapping one-thread blocks (two requests of a
server embedding at once) must leave it as it was, not at 1 for the rest of the process."""

from __future__ import annotations

import threading

import torch

from memfs.torch_threads import single_thread


def test_overlapping_blocks_restore_the_count_the_process_had() -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        first, second = single_thread(torch), single_thread(torch)
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)  # the order a save-and-restore per call got wrong
        assert torch.get_num_threads() == 1  # the other block still runs on one thread
        second.__exit__(None, None, None)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_many_threads_at_once_end_where_they_started() -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(2)

    def work() -> None:
        for _ in range(200):
            with single_thread(torch):
                assert torch.get_num_threads() == 1

    try:
        threads = [threading.Thread(target=work) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
