import KeyjarStore
import Logging
import NIOCore

extension StoreService {
    /// Moves the secrets an older Keyjar stored to the layout this one stores
    /// (`SecretStore.upgradeItems()`), in the credential lane, so that no credential write of a
    /// client runs between a secret's read and its move. Not awaited: a slow or locked Secret
    /// Service delays no client, and a secret not moved yet is still found where it is.
    func upgradeSecretsInTheBackground() {
        let logger = self.logger
        _ = inCredentialLane {
            self.offLoop { secrets -> Int in
                guard case .available = secrets.health() else { return 0 }
                return try secrets.upgradeItems()
            }.map { moved in
                if moved > 0 {
                    logger.info("moved keyring items to Keyjar's own attribute names", metadata: ["items": "\(moved)"])
                }
            }.recover { error in
                logger.warning(
                    "could not move keyring items to Keyjar's own attribute names; they are still used where they are",
                    metadata: ["reason": "\(error)"]
                )
            }
        }
    }
}
