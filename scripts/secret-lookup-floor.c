// The floor for keyjard's answer to a password request: one lookup in the Secret Service by a
// process already connected to it (its session open), through libsecret as keyjard does it
// (secret_password_lookupv_sync: SearchItems and GetSecrets over D-Bus, through the session
// bus daemon to gnome-keyring). `keyjar git-credential get` needs one, so it cannot cost less
// than `keyjar cookie get` (the same front, one request) plus this.
// `keyjar-bench cli` compiles and runs it beside the command, in the same Secret Service.
// Run by hand: gcc -O2 scripts/secret-lookup-floor.c $(pkg-config --cflags --libs libsecret-1)
//   -o /tmp/secret-floor && /tmp/secret-floor   (inside a session with a Secret Service)
#include <libsecret/secret.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int compare(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

// A schema of its own: storing an item replaces the items whose attributes include the new
// one's, and this one's never include keyjard's (their schema attribute differs).
static const SecretSchema schema = {
    "org.keyjar.BenchSecretLookupFloor", SECRET_SCHEMA_NONE,
    {{"server", SECRET_SCHEMA_ATTRIBUTE_STRING}, {"user", SECRET_SCHEMA_ATTRIBUTE_STRING}, {NULL, 0}}};

int main(void) {
    enum { N = 300, WARMUP = 20 };
    static double samples[N];
    GError *error = NULL;
    if (!secret_password_store_sync(&schema, SECRET_COLLECTION_DEFAULT, "keyjar-bench floor", "wonderland", NULL,
                                    &error, "server", "127.0.0.1", "user", "alice", NULL)) {
        fprintf(stderr, "cannot store: %s\n", error ? error->message : "?");
        return 1;
    }
    for (int i = 0; i < N; i++) {
        double start = now();
        gchar *password = secret_password_lookup_sync(&schema, NULL, &error, "server", "127.0.0.1", "user", "alice", NULL);
        samples[i] = now() - start;
        if (!password) {
            fprintf(stderr, "lookup failed: %s\n", error ? error->message : "no such item");
            return 1;
        }
        secret_password_free(password);
    }
    secret_password_clear_sync(&schema, NULL, NULL, "server", "127.0.0.1", "user", "alice", NULL);
    qsort(samples + WARMUP, N - WARMUP, sizeof(double), compare);
    double *kept = samples + WARMUP;
    int count = N - WARMUP;
    printf("one Secret Service lookup, connected (libsecret): median %.0f us p99 %.0f us\n", kept[count / 2] / 1e3,
           kept[count * 99 / 100] / 1e3);
    return 0;
}
