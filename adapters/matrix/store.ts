/**
 * The SDK's room store, persisted: matrix-js-sdk's `MemoryStore` plus a `SyncAccumulator` (what its
 * IndexedDB store does in browsers) saved to the adapter's key-value store. A restart loads the saved
 * rooms and resumes `/sync` from the saved `next_batch`, so old messages are not replayed.
 *
 * A `since` token is saved only after every inbound message of the syncs it covers was recorded by the
 * gateway (`track` registers them): a crash before that replays those messages, and the gateway's ledger
 * drops the ones it already has. Saving runs beside the sync loop, never holding it up.
 */
import { type ISyncResponse, MemoryStore, SyncAccumulator } from "matrix-js-sdk";
import type { ISavedSync } from "matrix-js-sdk/lib/store/index.js";
import type { Logger } from "../../core/logger.js";
import type { KeyValueStore } from "../../core/types.js";

const KEY = "sync";

interface SavedBlob {
  userId: string;
  sync: ISavedSync;
}

/** `MemoryStore` whose sync data survives restarts in `kv`. */
export class KvSyncStore extends MemoryStore {
  private readonly accumulator = new SyncAccumulator();
  private dirty = false;
  private readonly pending = new Set<Promise<unknown>>();
  /** Set when recording an inbound message failed: the token stays where it was until a restart. */
  private poisoned = false;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly kv: KeyValueStore,
    private readonly userId: string,
    private readonly log: Logger,
  ) {
    super();
    const raw = kv.get(KEY);
    if (!raw) return;
    try {
      const blob = JSON.parse(raw) as SavedBlob;
      // Another account's rooms must not leak into this one.
      if (blob.userId !== userId) return;
      this.accumulator.accumulate(
        {
          next_batch: blob.sync.nextBatch,
          rooms: blob.sync.roomsData,
          account_data: { events: blob.sync.accountData },
        } as ISyncResponse,
        true,
      );
    } catch (err) {
      log.warn({ err: (err as Error).message }, "saved matrix sync state unreadable; starting a fresh sync");
    }
  }

  /** Registers an inbound handler run; the next save waits for it. */
  track(work: Promise<unknown>): void {
    const p = work.then(
      () => undefined,
      () => {
        this.poisoned = true;
      },
    );
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** Whether a saved sync exists (a restart, not a first start). */
  hasSavedSync(): boolean {
    return !!this.accumulator.getNextBatchToken();
  }

  override setSyncData(syncData: ISyncResponse): Promise<void> {
    this.accumulator.accumulate(syncData);
    this.dirty = true;
    return Promise.resolve();
  }

  override wantsSave(): boolean {
    return this.dirty;
  }

  override save(): Promise<void> {
    this.queueSave();
    // The SDK awaits this in its sync loop: it must not wait for the handlers, since one may be waiting
    // for something only a later sync brings (an encrypted message's room key).
    return Promise.resolve();
  }

  /** One save at a time, in order, so an older snapshot never overwrites a newer one. */
  private queueSave(): Promise<void> {
    this.saving = this.saving.then(() => this.saveNow());
    return this.saving;
  }

  /** Waits for running inbound handlers and the last save. */
  async flush(): Promise<void> {
    await this.queueSave();
  }

  private async saveNow(): Promise<void> {
    if (!this.dirty) return;
    // Snapshot first: the SDK may accumulate the next sync while we wait for the handlers.
    const snapshot = this.accumulator.getJSON(true);
    this.dirty = false;
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    if (this.poisoned) {
      this.log.warn({}, "an inbound matrix message was not recorded; keeping the older sync token");
      return;
    }
    const blob: SavedBlob = { userId: this.userId, sync: snapshot };
    try {
      this.kv.set(KEY, JSON.stringify(blob));
    } catch (err) {
      this.dirty = true;
      this.log.warn({ err: (err as Error).message }, "matrix sync state not saved");
    }
  }

  override getSavedSync(): Promise<ISavedSync | null> {
    const data = this.accumulator.getJSON();
    if (!data.nextBatch) return Promise.resolve(null);
    // The sync processing mutates what it is given: hand it a copy.
    return Promise.resolve(structuredClone(data));
  }

  override getSavedSyncToken(): Promise<string | null> {
    return Promise.resolve(this.accumulator.getNextBatchToken() || null);
  }

  override async deleteAllData(): Promise<void> {
    this.kv.delete(KEY);
    await super.deleteAllData();
  }
}
