import CKeyjarTestSession

/// Whether the tests run in a private D-Bus session with a throwaway Secret Service and home:
/// scripts/test's, or the one a plain `swift test` re-runs itself in (Tests/CKeyjarTestSession).
/// Tests that store items under other programs' names check it first.
public var testSessionIsPrivate: Bool { keyjar_test_session_is_private() != 0 }
