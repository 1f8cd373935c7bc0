#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <string.h>

// A client identity (certificate, its chain, private key) as libcrypto reads it from a PEM file
// or a PKCS#12 bundle, normalised to what the loader hands libcurl and the Secret Service keeps:
// the certificate that matches the key first, then the rest of the chain, as PEM; the private
// key as unencrypted PKCS#8 PEM. Multi-step libcrypto calls with ownership rules Swift would
// have to mirror by hand, so they live here, in one function.

enum {
    KEYJAR_IDENTITY_OK = 0,
    KEYJAR_IDENTITY_UNREADABLE = 1,     // not PEM or PKCS#12, or a wrong passphrase
    KEYJAR_IDENTITY_NO_CERTIFICATE = 2,
    KEYJAR_IDENTITY_NO_KEY = 3,
    KEYJAR_IDENTITY_KEY_MISMATCH = 4,   // no certificate belongs to the key
    KEYJAR_IDENTITY_OUT_OF_MEMORY = 5,
};

static inline char *keyjar_bio_text(BIO *bio, size_t *length) {
    char *data = NULL;
    long size = BIO_get_mem_data(bio, &data);
    char *copy = (char *)malloc((size_t)size + 1);
    if (copy == NULL) return NULL;
    memcpy(copy, data, (size_t)size);
    copy[size] = 0;
    *length = (size_t)size;
    return copy;
}

static inline int keyjar_contains(const unsigned char *data, size_t length, const char *needle) {
    size_t size = strlen(needle);
    for (size_t i = 0; i + size <= length; i++) {
        if (memcmp(data + i, needle, size) == 0) return 1;
    }
    return 0;
}

// The passphrase callback libcrypto calls for an encrypted PEM key: never prompts.
static inline int keyjar_passphrase_callback(char *buffer, int size, int rwflag, void *user) {
    (void)rwflag;
    const char *passphrase = (const char *)user;
    if (passphrase == NULL) return 0;
    int length = (int)strlen(passphrase);
    if (length > size) length = size;
    memcpy(buffer, passphrase, (size_t)length);
    return length;
}

/// Reads an identity from `data` (`is_pkcs12`: a PKCS#12 bundle, else PEM text), decrypting with
/// `passphrase` (may be NULL). On success `*certificates` and `*key` are malloc'ed PEM texts the
/// caller frees. On failure, `reason` (of `reason_size` bytes) holds libcrypto's last error.
static inline int keyjar_read_identity(const unsigned char *data, size_t length, int is_pkcs12, const char *passphrase,
                                       char **certificates, size_t *certificates_length, char **key, size_t *key_length,
                                       char *reason, size_t reason_size) {
    ERR_clear_error();
    reason[0] = 0;
    EVP_PKEY *pkey = NULL;
    X509 *leaf = NULL;
    STACK_OF(X509) *chain = sk_X509_new_null();
    int status = KEYJAR_IDENTITY_OK;
    if (chain == NULL) return KEYJAR_IDENTITY_OUT_OF_MEMORY;

    BIO *input = BIO_new_mem_buf(data, (int)length);
    if (input == NULL) { sk_X509_free(chain); return KEYJAR_IDENTITY_OUT_OF_MEMORY; }
    if (is_pkcs12) {
        PKCS12 *bundle = d2i_PKCS12_bio(input, NULL);
        if (bundle == NULL || !PKCS12_parse(bundle, passphrase ? passphrase : "", &pkey, &leaf, &chain)) {
            status = KEYJAR_IDENTITY_UNREADABLE;
        }
        PKCS12_free(bundle);
    } else {
        X509 *certificate;
        while ((certificate = PEM_read_bio_X509(input, NULL, NULL, NULL)) != NULL) sk_X509_push(chain, certificate);
        ERR_clear_error();  // the end of the certificates
        (void)BIO_reset(input);
        // Only a file with a key block is asked to decode one: OpenSSL 3 reports a missing
        // key as a decoder error, indistinguishable from a wrong passphrase.
        if (keyjar_contains(data, length, "PRIVATE KEY-----")) {
            pkey = PEM_read_bio_PrivateKey(input, NULL, keyjar_passphrase_callback, (void *)passphrase);
            if (pkey == NULL) status = KEYJAR_IDENTITY_UNREADABLE;
        }
    }
    BIO_free(input);

    if (status == KEYJAR_IDENTITY_OK && pkey == NULL) status = KEYJAR_IDENTITY_NO_KEY;
    if (status == KEYJAR_IDENTITY_OK && leaf == NULL) {
        if (sk_X509_num(chain) == 0) status = KEYJAR_IDENTITY_NO_CERTIFICATE;
        for (int i = 0; status == KEYJAR_IDENTITY_OK && i < sk_X509_num(chain); i++) {
            X509 *candidate = sk_X509_value(chain, i);
            if (X509_check_private_key(candidate, pkey) == 1) {
                leaf = candidate;
                (void)sk_X509_delete(chain, i);
                break;
            }
        }
        ERR_clear_error();
        if (status == KEYJAR_IDENTITY_OK && leaf == NULL) status = KEYJAR_IDENTITY_KEY_MISMATCH;
    } else if (status == KEYJAR_IDENTITY_OK && X509_check_private_key(leaf, pkey) != 1) {
        status = KEYJAR_IDENTITY_KEY_MISMATCH;
    }

    if (status == KEYJAR_IDENTITY_OK) {
        BIO *certificatesOut = BIO_new(BIO_s_mem());
        BIO *keyOut = BIO_new(BIO_s_mem());
        int written = certificatesOut != NULL && keyOut != NULL && PEM_write_bio_X509(certificatesOut, leaf);
        for (int i = 0; written && i < sk_X509_num(chain); i++) written = PEM_write_bio_X509(certificatesOut, sk_X509_value(chain, i));
        written = written && PEM_write_bio_PKCS8PrivateKey(keyOut, pkey, NULL, NULL, 0, NULL, NULL);
        *certificates = written ? keyjar_bio_text(certificatesOut, certificates_length) : NULL;
        *key = written ? keyjar_bio_text(keyOut, key_length) : NULL;
        if (*certificates == NULL || *key == NULL) {
            free(*certificates);
            if (*key != NULL) { OPENSSL_cleanse(*key, *key_length); free(*key); }
            *certificates = NULL;
            *key = NULL;
            status = KEYJAR_IDENTITY_OUT_OF_MEMORY;
        }
        BIO_free(certificatesOut);
        BIO_free(keyOut);
    }
    if (status != KEYJAR_IDENTITY_OK && ERR_peek_last_error() != 0) {
        ERR_error_string_n(ERR_peek_last_error(), reason, reason_size);
    }
    ERR_clear_error();
    EVP_PKEY_free(pkey);
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    return status;
}

/// Wipes and frees a buffer `keyjar_read_identity` returned.
static inline void keyjar_free_secret(char *buffer, size_t length) {
    if (buffer == NULL) return;
    OPENSSL_cleanse(buffer, length);
    free(buffer);
}
