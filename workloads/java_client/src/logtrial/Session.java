package logtrial;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

/** One logical process's Kafka clients (a producer, a consumer, and a consumer that only
 *  looks up committed offsets), made on first use. Every call runs on the session's own
 *  thread: Kafka's consumer is not thread-safe. The operations mirror workloads/queue.py's. */
final class Session {
    private final Map<String, Object> producerConfig;
    private final Map<String, Object> consumerConfig;
    private final Map<String, Object> lookupConfig;
    private final boolean transactional;
    private final boolean commitAfterPoll;
    private final String autoOffsetReset;
    final long opTimeoutMs;
    private KafkaProducer<String, String> producer;
    private KafkaConsumer<String, String> consumer;
    private KafkaConsumer<String, String> lookup;
    private final List<Object> rebalanceLog = new ArrayList<>();
    // positions of the partitions a rebalance revoked, for those it gives back
    private final Map<TopicPartition, Long> revokedAt = new HashMap<>();
    private final List<Object> asyncErrors = new ArrayList<>();

    @SuppressWarnings("unchecked")
    Session(Map<String, Object> open) {
        producerConfig = (Map<String, Object>) open.get("producer");
        consumerConfig = (Map<String, Object>) open.get("consumer");
        lookupConfig = (Map<String, Object>) open.get("lookup");
        transactional = producerConfig.containsKey("transactional.id");
        commitAfterPoll = !"true".equals(consumerConfig.get("enable.auto.commit")) && !transactional;
        autoOffsetReset = String.valueOf(open.get("auto_offset_reset"));
        opTimeoutMs = ((Number) open.get("op_timeout_ms")).longValue();
    }

    private static Properties props(Map<String, Object> config, String serde) {
        Properties p = new Properties();
        config.forEach((k, v) -> p.put(k, String.valueOf(v)));
        if (serde.equals("ser")) {
            p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
            p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        } else {
            p.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
            p.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        }
        return p;
    }

    private KafkaProducer<String, String> producer() throws OpError {
        if (producer == null) {
            KafkaProducer<String, String> made = new KafkaProducer<>(props(producerConfig, "ser"));
            if (transactional) {
                try {
                    made.initTransactions();
                } catch (RuntimeException e) {
                    made.close(Duration.ZERO);
                    throw OpError.of(e, "table");
                }
            }
            producer = made;
        }
        return producer;
    }

    private KafkaConsumer<String, String> consumer() {
        if (consumer == null) consumer = new KafkaConsumer<>(props(consumerConfig, "de"));
        return consumer;
    }

    private KafkaConsumer<String, String> lookup() {
        if (lookup == null) lookup = new KafkaConsumer<>(props(lookupConfig, "de"));
        return lookup;
    }

    static List<TopicPartition> partitions(List<Object> pairs) {
        List<TopicPartition> tps = new ArrayList<>();
        for (Object o : pairs) {
            List<?> pair = (List<?>) o;
            tps.add(new TopicPartition((String) pair.get(0), ((Number) pair.get(1)).intValue()));
        }
        return tps;
    }

    private static List<Object> pairs(Collection<TopicPartition> tps) {
        List<Object> out = new ArrayList<>();
        for (TopicPartition tp : tps) out.add(List.of(tp.topic(), (long) tp.partition()));
        return out;
    }

    // -- warm ------------------------------------------------------------------------------
    /** Makes now what the session's first ops would make on first use: the producer
     *  (initTransactions when transactional) with the partitions' metadata, the consumer
     *  with theirs, and the lookup with the group's coordinator found. The harness asks
     *  this before its clock starts (harness/client_open.py), so no op pays the JVM's
     *  class loading and first connections. Nothing is sent, assigned or committed. */
    Object warm(List<TopicPartition> tps) throws OpError {
        KafkaProducer<String, String> p = producer();
        try {
            Duration timeout = Duration.ofMillis(opTimeoutMs);
            Set<String> topics = new HashSet<>();
            for (TopicPartition tp : tps) topics.add(tp.topic());
            for (String topic : topics) {
                p.partitionsFor(topic);
                consumer().partitionsFor(topic, timeout);
            }
            lookup().committed(new HashSet<>(tps), timeout);
        } catch (RuntimeException e) {
            throw OpError.of(e, "definite");
        }
        return null;
    }

    // -- assign and subscribe ---------------------------------------------------------------
    /** assign() keeps the position of every partition it keeps; the new ones start at the
     *  group's committed offset (or the beginning). Returns [[topic, partition, start], ...]
     *  of the starts it can name, the history's `starts`. */
    Object assign(List<TopicPartition> tps, boolean fromBeginning) throws OpError {
        try {
            KafkaConsumer<String, String> c = consumer();
            Map<TopicPartition, Long> kept = positions(c, c.assignment());
            kept.keySet().retainAll(tps);
            List<TopicPartition> fresh = new ArrayList<>(tps);
            fresh.removeAll(kept.keySet());
            Map<TopicPartition, OffsetAndMetadata> starts = fromBeginning ? Map.of() : committedStarts(fresh);
            c.assign(tps);
            return startsOf(kept, seek(c, fresh, starts, fromBeginning));
        } catch (RuntimeException e) {
            throw OpError.of(e, "table");
        }
    }

    /** The known positions of `tps` (one it cannot tell at once is left out). */
    private Map<TopicPartition, Long> positions(KafkaConsumer<String, String> c, Collection<TopicPartition> tps) {
        Map<TopicPartition, Long> out = new HashMap<>();
        for (TopicPartition tp : tps) {
            try {
                out.put(tp, c.position(tp, Duration.ofMillis(opTimeoutMs)));
            } catch (RuntimeException e) {
                // unknown: the partition starts afresh
            }
        }
        return out;
    }

    private static List<Object> startsOf(Map<TopicPartition, Long> kept, Map<TopicPartition, Long> fresh) {
        List<Object> out = new ArrayList<>();
        Map<TopicPartition, Long> all = new HashMap<>(fresh);
        all.putAll(kept);
        all.forEach((tp, offset) -> out.add(List.of(tp.topic(), (long) tp.partition(), offset)));
        return out;
    }

    /** The group's committed offsets, looked up by a consumer reading uncommitted (as
     *  clients.lookup_config says why); a failed lookup is definite: nothing was assigned. */
    private Map<TopicPartition, OffsetAndMetadata> committedStarts(Collection<TopicPartition> tps) throws OpError {
        try {
            Map<TopicPartition, OffsetAndMetadata> found = lookup().committed(new HashSet<>(tps),
                    Duration.ofMillis(opTimeoutMs));
            Map<TopicPartition, OffsetAndMetadata> starts = new HashMap<>();
            found.forEach((tp, om) -> { if (om != null) starts.put(tp, om); });
            return starts;
        } catch (RuntimeException e) {
            throw OpError.of(e, "definite");
        }
    }

    /** Seeks each of `tps` to its committed offset, else to where auto.offset.reset puts
     *  it; returns the starts it can name (the beginning is offset 0). */
    private Map<TopicPartition, Long> seek(KafkaConsumer<String, String> c, Collection<TopicPartition> tps,
                                           Map<TopicPartition, OffsetAndMetadata> starts, boolean fromBeginning) {
        Map<TopicPartition, Long> named = new HashMap<>();
        List<TopicPartition> reset = new ArrayList<>();
        for (TopicPartition tp : tps) {
            OffsetAndMetadata om = starts.get(tp);
            if (om != null) { c.seek(tp, om); named.put(tp, om.offset()); }
            else reset.add(tp);
        }
        if (reset.isEmpty()) return named;
        if (fromBeginning || !autoOffsetReset.equals("latest")) {
            c.seekToBeginning(reset);
            for (TopicPartition tp : reset) named.put(tp, 0L);
        } else c.seekToEnd(reset);
        return named;
    }

    Object subscribe(List<String> topics) throws OpError {
        try {
            consumer().subscribe(topics, new ConsumerRebalanceListener() {
                // as assign(): a partition given back continues where this consumer was
                @Override public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                    Map<TopicPartition, Long> kept = new HashMap<>(revokedAt);
                    kept.keySet().retainAll(tps);
                    revokedAt.clear();
                    List<TopicPartition> fresh = new ArrayList<>(tps);
                    fresh.removeAll(kept.keySet());
                    kept.forEach((tp, offset) -> consumer.seek(tp, offset));
                    try {
                        Map<TopicPartition, Long> named = seek(consumer, fresh, committedStarts(fresh), false);
                        rebalanceLog.add(List.of("assigned", pairs(tps), startsOf(kept, named)));
                    } catch (OpError e) {  // the consumer looks the offsets up itself
                        asyncErrors.add(e.name);
                        rebalanceLog.add(List.of("assigned", pairs(tps)));
                    }
                }
                @Override public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                    revokedAt.putAll(positions(consumer, tps));
                    rebalanceLog.add(List.of("revoked", pairs(tps)));
                }
            });
        } catch (RuntimeException e) {
            throw OpError.of(e, "table");
        }
        return null;
    }

    // -- send and poll -------------------------------------------------------------------------
    /** Sends [topic, partition, key, value] records and waits for every acknowledgement;
     *  the offsets in order. A send() that throws never left the client: definite. */
    Object send(List<Object> records) throws OpError {
        KafkaProducer<String, String> p = producer();
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (Object o : records) {
            List<?> r = (List<?>) o;
            try {
                futures.add(p.send(new ProducerRecord<>((String) r.get(0), ((Number) r.get(1)).intValue(),
                        String.valueOf(r.get(2)), String.valueOf(r.get(3)))));
            } catch (RuntimeException e) {
                throw OpError.of(e, futures.isEmpty() ? "definite" : "table");
            }
        }
        return await(futures);
    }

    private List<Object> await(List<Future<RecordMetadata>> futures) throws OpError {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(opTimeoutMs);
        List<Object> offsets = new ArrayList<>();
        for (Future<RecordMetadata> f : futures) {
            try {
                offsets.add(f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS).offset());
            } catch (java.util.concurrent.TimeoutException e) {
                throw new OpError("OP_TIMEOUT", "no acknowledgement in time", "table", false);
            } catch (InterruptedException e) {
                throw new OpError("OP_TIMEOUT", "interrupted", "table", false);
            } catch (java.util.concurrent.ExecutionException e) {
                throw OpError.of(e, "table");
            }
        }
        return offsets;
    }

    /** One poll: [[topic, partition, offset, value], ...]. A poll that throws returned
     *  nothing, so consumed nothing: definite. */
    Map<String, Object> poll(long timeoutMs) throws OpError {
        List<Object> records = new ArrayList<>();
        try {
            for (ConsumerRecord<String, String> r : consumer().poll(Duration.ofMillis(timeoutMs))) {
                records.add(List.of(r.topic(), (long) r.partition(), r.offset(), r.value()));
            }
        } catch (RuntimeException e) {
            throw OpError.of(e, "definite");
        }
        if (!records.isEmpty() && commitAfterPoll) {
            consumer.commitAsync((offsets, e) -> { if (e != null) asyncErrors.add(e.getClass().getSimpleName()); });
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("records", records);
        return out;
    }

    /** What the polls since the last call saw beside their records (poll_errors, rebalance_log). */
    void drainExtra(Map<String, Object> reply) {
        if (!asyncErrors.isEmpty()) { reply.put("poll_errors", new ArrayList<>(asyncErrors)); asyncErrors.clear(); }
        if (!rebalanceLog.isEmpty()) { reply.put("rebalance_log", new ArrayList<>(rebalanceLog)); rebalanceLog.clear(); }
    }

    // -- transactions ----------------------------------------------------------------------------
    /** One transaction of micro-ops (["send", topic, partition, key, value] or ["poll", timeout_ms]);
     *  the results in order (offsets, or a poll's records). */
    List<Object> txn(List<Object> mops, boolean abortOnPurpose) throws OpError {
        KafkaProducer<String, String> p = producer();
        try {
            p.beginTransaction();
        } catch (RuntimeException e) {
            throw OpError.of(e, "table");
        }
        Map<TopicPartition, Long> firstPolled = new HashMap<>();
        List<Object> results = new ArrayList<>();
        try {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            List<Integer> sendSlots = new ArrayList<>();
            for (Object o : mops) {
                List<?> m = (List<?>) o;
                if (m.get(0).equals("send")) {
                    sendSlots.add(results.size());
                    results.add(null);
                    futures.add(p.send(new ProducerRecord<>((String) m.get(1), ((Number) m.get(2)).intValue(),
                            String.valueOf(m.get(3)), String.valueOf(m.get(4)))));
                } else {
                    Map<String, Object> polled = poll(((Number) m.get(1)).longValue());
                    remember(firstPolled, polled);
                    results.add(polled.get("records"));
                }
            }
            List<Object> offsets = await(futures);
            for (int k = 0; k < sendSlots.size(); k++) results.set(sendSlots.get(k), offsets.get(k));
        } catch (OpError e) {
            throw abort(p, firstPolled, e.name, e.getMessage());
        } catch (RuntimeException e) {
            Throwable r = OpError.root(e);
            throw abort(p, firstPolled, r.getClass().getSimpleName(), String.valueOf(r.getMessage()));
        }
        if (abortOnPurpose) throw abort(p, firstPolled, "ABORTED_ON_PURPOSE", "aborted on purpose (--abort-p)");
        commit(p, firstPolled);
        return results;
    }

    @SuppressWarnings("unchecked")
    private static void remember(Map<TopicPartition, Long> first, Map<String, Object> polled) {
        for (Object o : (List<Object>) polled.get("records")) {
            List<?> r = (List<?>) o;
            TopicPartition tp = new TopicPartition((String) r.get(0), ((Number) r.get(1)).intValue());
            first.merge(tp, ((Number) r.get(2)).longValue(), Math::min);
        }
    }

    /** Sends the consumer's positions with the transaction and commits, retrying a commit
     *  that timed out until the op's time is up. A fatal error leaves the outcome unknown;
     *  any other is followed by an abort, and only an abort that succeeds is definite. */
    private void commit(KafkaProducer<String, String> p, Map<TopicPartition, Long> firstPolled) throws OpError {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(opTimeoutMs);
        try {
            sendOffsets(p);
            while (true) {
                try {
                    p.commitTransaction();
                    return;
                } catch (org.apache.kafka.common.errors.TimeoutException e) {
                    if (System.nanoTime() > deadline) throw e;
                }
            }
        } catch (RuntimeException e) {
            Throwable r = OpError.root(e);
            String name = r.getClass().getSimpleName();
            if (fatal(r) || r instanceof org.apache.kafka.common.errors.TimeoutException) {
                throw new OpError(name, r.getMessage() + " (during commit)", "indefinite", true);
            }
            throw abort(p, firstPolled, name, r.getMessage() + " (transaction aborted)");
        }
    }

    private void sendOffsets(KafkaProducer<String, String> p) {
        KafkaConsumer<String, String> c = consumer();
        Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
        for (TopicPartition tp : c.assignment()) {
            positions.put(tp, new OffsetAndMetadata(c.position(tp, Duration.ofMillis(opTimeoutMs))));
        }
        if (!positions.isEmpty()) p.sendOffsetsToTransaction(positions, c.groupMetadata());
    }

    /** The producer cannot go on after these: no abort is possible, the outcome is unknown. */
    private static boolean fatal(Throwable t) {
        return t instanceof ProducerFencedException || t instanceof OutOfOrderSequenceException
                || t instanceof AuthorizationException || t instanceof UnsupportedVersionException;
    }

    /** Aborts: success makes the op a definite failure under `name`, and the consumer is
     *  rewound to the first offset the transaction polled on each partition; a failed
     *  abort is indefinite. Returns the error to throw. */
    private OpError abort(KafkaProducer<String, String> p, Map<TopicPartition, Long> firstPolled,
                          String name, String message) {
        try {
            p.abortTransaction();
        } catch (RuntimeException e) {
            Throwable r = OpError.root(e);
            return new OpError(r.getClass().getSimpleName(), r.getMessage() + " (during abort)", "indefinite", true);
        }
        try {
            firstPolled.forEach((tp, offset) -> consumer.seek(tp, offset));
        } catch (RuntimeException e) {  // the process is retired: its consumer is where nobody knows
            return new OpError(name, message, "definite", true);
        }
        return new OpError(name, message, "definite", false);
    }

    // -- a timed transaction, for scripts/txn_late_batch_probe.py ---------------------------------
    /** Begins, sends [topic, partition, key, value] records, waits up to waitMs for their acks,
     *  then commits or aborts. An end that times out (max.block.ms) is called again while
     *  retryMs has not passed since the first try: KafkaProducer allows only that retry. Returns
     *  when each step happened, in epoch ms (the caller sets them beside its own clock): "begun",
     *  "waited", each send's outcome as its callback saw it ({"at", "offset"} or {"at", "error"};
     *  empty if unresolved when the end returned), and each end try [outcome, started, ended]. */
    Map<String, Object> timedTxn(List<Object> records, long waitMs, boolean commit, long retryMs) throws OpError {
        KafkaProducer<String, String> p = producer();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("begun", System.currentTimeMillis());
        try {
            p.beginTransaction();
        } catch (RuntimeException e) {
            throw OpError.of(e, "table");
        }
        List<Map<String, Object>> sends = new ArrayList<>();
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (Object o : records) {
            List<?> r = (List<?>) o;
            Map<String, Object> seen = new LinkedHashMap<>();
            sends.add(seen);
            // the callback runs on the producer's I/O thread: it fills `seen` under its lock
            futures.add(p.send(new ProducerRecord<>((String) r.get(0), ((Number) r.get(1)).intValue(),
                    String.valueOf(r.get(2)), String.valueOf(r.get(3))), (md, e) -> {
                synchronized (seen) {
                    seen.put("at", System.currentTimeMillis());
                    if (e == null) seen.put("offset", md.offset());
                    else seen.put("error", OpError.root(e).getClass().getSimpleName());
                }
            }));
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        for (Future<RecordMetadata> f : futures) {
            try {
                f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                // unresolved or failed: the callback says which
            }
        }
        out.put("waited", System.currentTimeMillis());
        List<Object> ends = new ArrayList<>();
        long firstTry = System.currentTimeMillis();
        while (true) {
            long started = System.currentTimeMillis();
            String outcome = "ok";
            try {
                if (commit) p.commitTransaction();
                else p.abortTransaction();
            } catch (RuntimeException e) {
                outcome = OpError.root(e).getClass().getSimpleName();
            }
            long ended = System.currentTimeMillis();
            ends.add(List.of(outcome, started, ended));
            if (!outcome.equals("TimeoutException") || ended - firstTry >= retryMs) break;
        }
        out.put("ends", ends);
        List<Object> seenCopies = new ArrayList<>();
        for (Map<String, Object> seen : sends) {
            synchronized (seen) { seenCopies.add(new LinkedHashMap<>(seen)); }
        }
        out.put("sends", seenCopies);
        return out;
    }

    void close() {
        KafkaProducer<String, String> p = producer;
        KafkaConsumer<String, String> c = consumer, l = lookup;
        producer = null; consumer = null; lookup = null;
        if (p != null) p.close(Duration.ZERO);
        for (KafkaConsumer<String, String> k : new KafkaConsumer[] {c, l}) {
            if (k != null) {
                try { k.close(Duration.ofSeconds(5)); } catch (RuntimeException e) { /* closing anyway */ }
            }
        }
    }
}
