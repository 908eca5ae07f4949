package logtrial;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Serves logtrial's Java client sessions over stdin/stdout, one JSON object a line.
 *  Request: {"id", "session", "cmd", ...}; reply: {"id", "ok": value, ...} or
 *  {"id", "error": [name, message], "how", "retire"}. Each session's requests run in
 *  order on its own thread; replies may interleave across sessions
 *  (workloads/java_client/jvm.py matches them by id). */
public final class Server {
    private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    private static final Map<Long, Session> SESSIONS = new ConcurrentHashMap<>();
    private static final Map<Long, ExecutorService> THREADS = new ConcurrentHashMap<>();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        reply(Map.of("id", -1L, "ok", org.apache.kafka.common.utils.AppInfoParser.getVersion()));  // ready
        String line;
        while ((line = in.readLine()) != null) {
            @SuppressWarnings("unchecked")
            Map<String, Object> req = (Map<String, Object>) Json.parse(line);
            long session = ((Number) req.get("session")).longValue();
            ExecutorService thread = THREADS.computeIfAbsent(session, s -> Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "session-" + s);
                t.setDaemon(true);
                return t;
            }));
            thread.submit(() -> reply(handle(session, req)));
            if ("close".equals(req.get("cmd"))) THREADS.remove(session).shutdown();
        }
        System.exit(0);  // stdin closed: the harness is done (or gone)
    }

    private static synchronized void reply(Map<String, Object> reply) {
        OUT.println(Json.write(reply));
        OUT.flush();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> handle(long id, Map<String, Object> req) {
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("id", req.get("id"));
        Session s = SESSIONS.get(id);
        try {
            Object ok;
            switch ((String) req.get("cmd")) {
                case "open": SESSIONS.put(id, new Session(req)); ok = null; break;
                case "assign": ok = s.assign(Session.partitions((List<Object>) req.get("partitions")),
                        Boolean.TRUE.equals(req.get("from_beginning"))); break;
                case "warm": ok = s.warm(Session.partitions((List<Object>) req.get("partitions"))); break;
                case "subscribe": ok = s.subscribe((List<String>) req.get("topics")); break;
                case "send": ok = s.send((List<Object>) req.get("records")); break;
                case "poll": ok = s.poll(((Number) req.get("timeout_ms")).longValue()).get("records"); break;
                case "txn": ok = s.txn((List<Object>) req.get("mops"), Boolean.TRUE.equals(req.get("abort"))); break;
                case "timed_txn": ok = s.timedTxn((List<Object>) req.get("records"),
                        ((Number) req.get("wait_ms")).longValue(), Boolean.TRUE.equals(req.get("commit")),
                        ((Number) req.get("retry_ms")).longValue()); break;
                case "close": SESSIONS.remove(id); if (s != null) s.close(); ok = null; break;
                case "echo": ok = req.get("value"); break;
                default: throw new OpError("UnknownCommand", String.valueOf(req.get("cmd")), "table", false);
            }
            reply.put("ok", ok);
        } catch (OpError e) {
            reply.put("error", List.of(e.name, String.valueOf(e.getMessage())));
            reply.put("how", e.how);
            reply.put("retire", e.retire);
        } catch (Throwable t) {  // a bug here, or a client error nobody expected: the harness says CLIENT_CRASH
            Throwable r = OpError.root(t);
            reply.put("error", List.of("CLIENT_CRASH", r.getClass().getSimpleName() + ": " + r.getMessage()));
            reply.put("how", "table");
            reply.put("retire", true);
        }
        if (s != null) s.drainExtra(reply);
        return reply;
    }
}
