package logtrial;

/** How an operation ended when it did not end ok. `how` says who decides fail or info:
 *  "table" (Python's error table, by the exception's name), "definite" (certainly did
 *  not take effect: the call never left the client, or an abort succeeded) or
 *  "indefinite" (a commit or abort whose outcome is unknown). */
final class OpError extends Exception {
    final String name;
    final String how;
    final boolean retire;

    OpError(String name, String message, String how, boolean retire) {
        super(message);
        this.name = name;
        this.how = how;
        this.retire = retire;
    }

    /** The exception that says what went wrong: an ExecutionException's cause. */
    static Throwable root(Throwable t) {
        while ((t instanceof java.util.concurrent.ExecutionException
                || t instanceof java.util.concurrent.CompletionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static OpError of(Throwable t, String how) {
        Throwable r = root(t);
        return new OpError(r.getClass().getSimpleName(), String.valueOf(r.getMessage()), how, false);
    }
}
