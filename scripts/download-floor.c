/* The floor of `keyjar-bench download`: plain libcurl saving a URL to a file (its default
 * write callback, fwrite), then fsync, as Keyjar's download does before its rename.
 *
 *   cc -O2 scripts/download-floor.c -lcurl -o download-floor && ./download-floor URL FILE
 *
 * Prints "floor: BYTES bytes in SECONDS s". */
#include <curl/curl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s URL FILE\n", argv[0]); return 2; }
    FILE *file = fopen(argv[2], "wb");
    if (!file) { perror(argv[2]); return 1; }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, argv[1]);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, file);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    CURLcode code = curl_easy_perform(easy);
    fflush(file);
    fsync(fileno(file));
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (code != CURLE_OK) { fprintf(stderr, "%s\n", curl_easy_strerror(code)); return 1; }
    curl_off_t bytes = 0;
    curl_easy_getinfo(easy, CURLINFO_SIZE_DOWNLOAD_T, &bytes);
    printf("floor: %lld bytes in %.6f s\n", (long long)bytes,
           (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9);
    fclose(file);
    curl_easy_cleanup(easy);
    return 0;
}
