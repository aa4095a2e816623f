import AppleAdapters

/// The extension's principal class (`NSExtensionPrincipalClass` = `$(PRODUCT_MODULE_NAME).NotificationService`). The
/// adapter reads the keychain group from this extension's Info.plist and does the rest.
final class NotificationService: NotificationServiceExtensionAdapter {}
