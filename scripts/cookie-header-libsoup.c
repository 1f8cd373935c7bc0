/*
 * libsoup's cookie jar doing what `keyjar-bench engine` measures of Keyjar's: the Cookie header
 * for https://www.siteN.com/some/path out of a jar of 10,000 cookies over 500 sites (20 each,
 * the same Set-Cookie lines). keyjar-bench compiles and runs it in the same invocation and
 * prints the ratio. URLs are parsed once up front (a loader holds a parsed URL), as Keyjar's
 * `cookie_header_from_url` starts from a Foundation URL.
 *
 *   cc -O2 scripts/cookie-header-libsoup.c $(pkg-config --cflags --libs libsoup-3.0) -o peer
 *   ./peer            # prints: libsoup_cookie_header_median: N ns, header bytes
 */
#include <libsoup/soup.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { SITES = 500, PER_SITE = 20, LOOKUPS = 200000 };

static unsigned long long nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
}

static int compare(const void *a, const void *b) {
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

int main(void) {
    SoupCookieJar *jar = soup_cookie_jar_new();
    GUri *uris[SITES];
    char url[128], header[256];
    for (int site = 0; site < SITES; site++) {
        snprintf(url, sizeof url, "https://www.site%d.com/some/path", site);
        uris[site] = g_uri_parse(url, SOUP_HTTP_URI_FLAGS, NULL);
        if (!uris[site]) { fprintf(stderr, "cannot parse %s\n", url); return 1; }
        for (int index = 0; index < PER_SITE; index++) {
            int length = snprintf(header, sizeof header, "c%d=v%dx%d_3f9a1c0e7b2d4f6a", index, site, index);
            switch (index % 4) {
            case 0: snprintf(header + length, sizeof header - length, "; Domain=site%d.com; Path=/", site); break;
            case 1: snprintf(header + length, sizeof header - length, "; Path=/some; Secure; HttpOnly"); break;
            case 2: snprintf(header + length, sizeof header - length, "; Domain=site%d.com; Path=/other; Max-Age=86400", site); break;
            default: snprintf(header + length, sizeof header - length, "; Path=/; Max-Age=3600; SameSite=Lax"); break;
            }
            soup_cookie_jar_set_cookie(jar, uris[site], header);
        }
    }
    GSList *all = soup_cookie_jar_all_cookies(jar);
    unsigned count = g_slist_length(all);
    g_slist_free_full(all, (GDestroyNotify)soup_cookie_free);
    if (count != SITES * PER_SITE) { fprintf(stderr, "jar holds %u cookies, expected %d\n", count, SITES * PER_SITE); return 1; }

    unsigned long long *samples = malloc(sizeof *samples * LOOKUPS);
    unsigned long long bytes = 0;
    for (int iteration = 0; iteration < LOOKUPS; iteration++) {
        GUri *uri = uris[(unsigned)(iteration * 7919) % SITES];
        unsigned long long start = nanoseconds();
        char *cookies = soup_cookie_jar_get_cookies(jar, uri, TRUE);
        samples[iteration] = nanoseconds() - start;
        if (cookies) { bytes += strlen(cookies); g_free(cookies); }
    }
    qsort(samples, LOOKUPS, sizeof *samples, compare);
    printf("libsoup_cookie_header_median: %llu ns\n", samples[LOOKUPS / 2]);
    printf("libsoup_cookie_header_p99: %llu ns\n", samples[LOOKUPS * 99 / 100]);
    printf("libsoup_header_bytes_per_lookup: %llu\n", bytes / LOOKUPS);
    return 0;
}
