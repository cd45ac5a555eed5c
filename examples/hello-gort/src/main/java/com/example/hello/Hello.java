package com.example.hello;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.sync.WaitGroup;

/**
 * A program of your own on gort: workers square numbers fed through a channel, a WaitGroup closes
 * the results channel when they are done, and main sums the squares.
 */
public final class Hello {
    private Hello() {}

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        Go.run(() -> {
            Chan<Integer> jobs = Chan.make(16);
            Chan<Long> results = Chan.make(16);
            WaitGroup wg = new WaitGroup();
            for (int w = 0; w < 4; w++) {
                wg.add(1);
                Go.go(() -> {
                    try {
                        for (Integer j : jobs) {
                            results.send((long) j * j);
                        }
                    } finally {
                        wg.done();
                    }
                });
            }
            Go.go(() -> {
                for (int i = 1; i <= n; i++) {
                    jobs.send(i);
                }
                jobs.close();
            });
            Go.go(() -> {
                wg.await();
                results.close();
            });
            long sum = 0;
            for (Long r : results) {
                sum += r;
            }
            System.out.printf(
                    "hello from gort: the squares of 1..%d sum to %d (GOMAXPROCS=%d)%n", n, sum, Go.gomaxprocs());
        });
    }
}
