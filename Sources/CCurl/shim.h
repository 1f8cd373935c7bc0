#include <curl/curl.h>

// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot
// call; these typed wrappers are the only way the loader reaches them.

static inline CURLcode keyjar_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode keyjar_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode keyjar_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode keyjar_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode keyjar_easy_setopt_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode keyjar_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode keyjar_easy_setopt_read_function(CURL *handle, curl_read_callback value) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, value);
}
static inline CURLcode keyjar_easy_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
static inline CURLcode keyjar_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode keyjar_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode keyjar_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode keyjar_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLMcode keyjar_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}
// CURLMsg's payload is a union Swift imports awkwardly; these read the two fields used.
static inline CURL *keyjar_message_easy_handle(CURLMsg *message) { return message->easy_handle; }
static inline int keyjar_message_is_done(CURLMsg *message) { return message->msg == CURLMSG_DONE; }
static inline CURLcode keyjar_message_result(CURLMsg *message) { return message->data.result; }
// CURLAUTH_* and CURLVERSION_NOW are macros with casts, which Swift does not import.
static inline long keyjar_auth_basic(void) { return (long)CURLAUTH_BASIC; }
static inline long keyjar_auth_digest(void) { return (long)CURLAUTH_DIGEST; }
static inline long keyjar_auth_ntlm(void) { return (long)CURLAUTH_NTLM; }
static inline long keyjar_auth_negotiate(void) { return (long)CURLAUTH_NEGOTIATE; }
static inline long keyjar_auth_bearer(void) { return (long)CURLAUTH_BEARER; }
static inline curl_version_info_data *keyjar_version_info(void) { return curl_version_info(CURLVERSION_NOW); }
// In-memory blobs (a client certificate and key); libcurl keeps its own copy.
static inline CURLcode keyjar_easy_setopt_blob(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob = { (void *)data, length, CURL_BLOB_COPY };
    return curl_easy_setopt(handle, option, &blob);
}
// libcurl passes the TLS handshake messages it receives, decrypted, to a verbose handle's debug
// function. This one counts the server's CertificateRequest messages (handshake type 13, a
// 4-byte header whose length is the rest): how the loader learns that a server asked for a
// client certificate, which libcurl does not report otherwise.
static inline int keyjar_certificate_request_trace(CURL *handle, curl_infotype type, char *data, size_t size, void *user) {
    (void)handle;
    if (type == CURLINFO_SSL_DATA_IN && size >= 4 && user != NULL) {
        const unsigned char *bytes = (const unsigned char *)data;
        size_t length = ((size_t)bytes[1] << 16) | ((size_t)bytes[2] << 8) | (size_t)bytes[3];
        if (bytes[0] == 13 && length == size - 4) *(int *)user += 1;
    }
    return 0;
}
static inline void keyjar_easy_trace_certificate_requests(CURL *handle, int *requests) {
    curl_easy_setopt(handle, CURLOPT_VERBOSE, 1L);
    curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, keyjar_certificate_request_trace);
    curl_easy_setopt(handle, CURLOPT_DEBUGDATA, (void *)requests);
}
// KEYJAR_LOADER_TRACE's trace: libcurl's verbose output through a function of the loader's own,
// which leaves out what carries secrets (CurlTrace).
static inline void keyjar_easy_trace(CURL *handle, curl_debug_callback function) {
    curl_easy_setopt(handle, CURLOPT_VERBOSE, 1L);
    curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, function);
}
