#ifndef CKEYJAR_TEST_SESSION_H
#define CKEYJAR_TEST_SESSION_H

/* Whether the test process runs in a private D-Bus session with a throwaway Secret Service
 * (scripts/test's, or the one TestSession.c starts for a plain `swift test`). */
int keyjar_test_session_is_private(void);

#endif
