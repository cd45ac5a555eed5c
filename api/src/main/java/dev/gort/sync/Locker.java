package dev.gort.sync;

/** Go's {@code sync.Locker}: something that can be locked and unlocked. */
public interface Locker {
    void lock();

    void unlock();
}
