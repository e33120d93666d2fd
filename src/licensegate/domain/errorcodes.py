"""Every error code of both interfaces, declared once: what kind of refusal it is, the message a
person reads unless the raise site says more, and when it is answered.

Raise through an entry: `raise errorcodes.USER_NOT_FOUND(username=name)` fills the default
message's `{fields}`; `raise errorcodes.INVALID_NAME("...")` gives a message of its own. A few
codes mean the same thing to a program but are refused as different kinds in different places
(`user_not_found` is 404 for a name the seller gave and 403 for a session whose user was
deleted); each such use has its own entry. `docs/api/errors.md` is generated from this module
(`licensegate reference`), and tests/domain/test_errorcodes.py refuses a refusal built from a code
that is not declared here. A new feature adds its codes here.
"""

from __future__ import annotations

from licensegate.domain.errors import ErrorCode, Kind
from licensegate.domain.messages import DEFAULTS as APP_MESSAGES

E = ErrorCode


def _app(name: str, when: str) -> str:
    return f"{when} The message is the application's `{name}` message (the seller may change it)."


# --- reading the request -----------------------------------------------------------------------

MISSING_TYPE = E("missing_type", "invalid", "The 'type' parameter is required.", "No `type` was given.")
UNKNOWN_TYPE = E("unknown_type", "invalid", "Unknown type '{type}'.", "No operation has this `type`.")
MISSING_PARAMETER = E(
    "missing_parameter",
    "invalid",
    "Parameter '{name}' is required.",
    "A required parameter is absent or empty (`param` names it), or none of a set of parameters of "
    "which at least one is needed was given.",
)
PARAMETER_TOO_LONG = E(
    "parameter_too_long",
    "invalid",
    "Parameter '{name}' is too long (at most {max_length} characters).",
    "A parameter is longer than its maximum length (`param` names it).",
)
INVALID_PARAMETER = E(
    "invalid_parameter",
    "invalid",
    "Parameter '{name}' must be one of: {choices}.",
    "A parameter's value is not one of those it accepts (`param` names it).",
)
INVALID_BOOLEAN = E(
    "invalid_boolean",
    "invalid",
    "Parameter '{name}' must be 1 or 0 (also accepted: true/false, yes/no, on/off).",
    "A flag is not one of 1/0/true/false/yes/no/on/off (`param` names it).",
)
INVALID_NUMBER = E(
    "invalid_number",
    "invalid",
    "Parameter '{name}' must be a whole number.",
    "A numeric parameter is not a number as this service writes them (`param` names it): ASCII "
    "digits 0-9 with an optional sign and, for a number of days, an optional `.fraction`. Exponents "
    "(`1e3`), `_` separators (`1_0`), `inf`/`nan` and other scripts' digits (`٣`) are refused.",
)
NUMBER_OUT_OF_RANGE = E(
    "number_out_of_range",
    "invalid",
    "Parameter '{name}' must be at most {maximum}.",
    "A number is below its minimum or above its maximum (`param` names the parameter when one "
    "parameter is at fault).",
)
INVALID_CHARACTER = E(
    "invalid_character",
    "invalid",
    "Parameter '{name}' contains a NUL character.",
    "A parameter contains a NUL character (`param` names it).",
)
INVALID_ENCODING = E(
    "invalid_encoding",
    "invalid",
    "The {what} is not valid UTF-8.",
    "The query string or the body is not valid UTF-8 (after percent-decoding).",
)
INVALID_ENCRYPTION = E(
    "invalid_encryption",
    "invalid",
    "An encrypted parameter does not decrypt with this key.",
    "A KeyAuth 1.0 library's encrypted value does not decrypt with the application's secret (at "
    "`init`) or the session's key: the library was built with another secret.",
)
TOO_MANY_PARAMETERS = E(
    "too_many_parameters",
    "invalid",
    "The {what} has too many parameters.",
    "The query string or the body has more than 200 parameters.",
)
REQUEST_TOO_LARGE = E(
    "request_too_large",
    "invalid",
    "The {what} is too large (at most {max_bytes} bytes).",
    "The request body is over the limit of its operation (`LICENSEGATE_MAX_BODY_BYTES`, or the "
    "larger limit the reference states for the operation).",
)
URI_TOO_LONG = E(
    "uri_too_long",
    "invalid",
    "The query string is too long (at most {max_bytes} bytes); send the parameters in a POST body.",
    "The query string is over `LICENSEGATE_MAX_QUERY_BYTES`: answered with status 414 in every "
    "dialect (the parameters fit a form body). A URL over 65,534 bytes never reaches the service: "
    "the HTTP layer answers an empty 414 itself.",
)
HEADERS_TOO_LARGE = E(
    "headers_too_large",
    "invalid",
    "The request headers are too large (at most {max_bytes} bytes).",
    "The request's headers are over `LICENSEGATE_MAX_HEADER_BYTES`: answered with status 431 in "
    "every dialect. Headers over about 400 KiB, or more than 100 header fields, never reach the "
    "service: the HTTP layer answers an empty 431 itself.",
)
INVALID_REQUEST = E(
    "invalid_request",
    "invalid",
    "The Content-Length header is not a number.",
    "The request itself is malformed (a Content-Length that is not a number).",
)
LENGTH_REQUIRED = E(
    "length_required",
    "invalid",
    "A multipart request must declare its Content-Length.",
    "A multipart upload did not declare its length.",
)
INCOMPLETE_BODY = E(
    "incomplete_body",
    "invalid",
    "The request body did not arrive in full (the connection ended, a chunk was malformed, or it "
    "arrived too slowly).",
    "The client went away in the middle of its body, sent a malformed chunk, or sent its body more "
    "slowly than `LICENSEGATE_BODY_TIMEOUT` allows. The connection is closed after this answer.",
)
INVALID_MULTIPART = E(
    "invalid_multipart",
    "invalid",
    "The multipart body cannot be read: {reason}",
    "A multipart body cannot be parsed, or carries a file field the operation does not take.",
)
CONFLICTING_PARAMETERS = E(
    "conflicting_parameters",
    "invalid",
    "Two parameters contradict each other; give one of them.",
    "Two parameters that exclude each other were both given.",
)
FILE_AND_URL = E(
    "file_and_url",
    "invalid",
    "Give either the file field 'file' or 'url', not both.",
    "An upload gave both a file and a URL.",
)
SUB_OR_LEVEL = E(
    "sub_or_level",
    "invalid",
    "Give either 'sub' or 'level', not both and not neither.",
    "Exactly one of `sub` and `level` is needed.",
)
NOTHING_TO_CHANGE = E(
    "nothing_to_change",
    "invalid",
    "Give at least one of 'name', 'authed' and 'url' to change.",
    "An edit named nothing to change.",
)
NOTHING_TO_UPDATE = E(
    "nothing_to_update",
    "invalid",
    "Give at least one setting to change.",
    "A settings update named no setting.",
)

# --- the client API's credentials and session ---------------------------------------------------

MISSING_OWNERID = E("missing_ownerid", "unauthorized", "No ownerid specified.", "No `ownerid` was given.")
MISSING_NAME = E(
    "missing_name", "unauthorized", "No application name specified.", "No application `name` was given."
)
UNKNOWN_APPLICATION = E(
    "unknown_application",
    "unauthorized",
    "No application has this ownerid and name: the application doesn't exist.",
    "No application has this `ownerid` and `name`.",
)
MISSING_SESSION = E(
    "missing_session",
    "unauthorized",
    "No session id specified; call init first.",
    "An operation that needs a session got no `sessionid`.",
)
LOG_QUOTA_EXCEEDED = E(
    "log_quota_exceeded",
    "forbidden",
    "This session has stored its {quota} {what}; start a new session to send more.",
    "A client session sent more `log` lines or `tamper` reports than one session may store "
    "(`LICENSEGATE_LOG_LINES_PER_SESSION`, `LICENSEGATE_TAMPER_REPORTS_PER_SESSION`).",
)
SESSION_GONE = E(
    "session_not_found",
    "forbidden",
    "Session not found; call init again.",
    "Client API: the `sessionid` names no live session of this application (ended, or its user was deleted). "
    "A session a ban or a pause ended says why: `ended` (`banned` with the ban's `reason`, or `paused`) and "
    "the application's `userbanned`, `keybanned` or `pausedsub` message.",
)
SESSION_NOT_FOUND = E(
    "session_not_found",
    "not_found",
    "No session with this id exists for the application.",
    "Seller API: no session of this application has this id.",
)
SESSION_EXPIRED = E(
    "session_expired",
    "forbidden",
    "Session expired; call init again.",
    "Client API: the session has expired.",
)
SESSION_NOT_VALIDATED = E(
    "session_not_validated",
    "forbidden",
    APP_MESSAGES["sessionunauthed"],
    _app("sessionunauthed", "The operation needs a logged-in session and this one is not."),
)
APP_DISABLED = E(
    "app_disabled",
    "forbidden",
    APP_MESSAGES["appdisabled"],
    _app("appdisabled", "The application is disabled."),
)
APP_PAUSED = E(
    "app_paused",
    "forbidden",
    APP_MESSAGES["pausedApp"],
    _app("pausedApp", "init: the application is paused."),
)
VERSION_MISMATCH = E(
    "version_mismatch",
    "forbidden",
    "invalidver",
    "init: `ver` differs from the application's version. The message is `invalidver` (what KeyAuth "
    "clients look for) and `download` carries the application's download link (empty when none).",
)
HASH_MISMATCH = E(
    "hash_mismatch",
    "forbidden",
    APP_MESSAGES["hashcheckfail"],
    _app("hashcheckfail", "init: the program's hash is not one the application accepts."),
)
SESSION_USER_GONE = E(
    "user_not_found",
    "forbidden",
    "This session's user no longer exists.",
    "Client API: the session's user was deleted while the session was open.",
)

# --- seller keys, team accounts, permissions ----------------------------------------------------

UPLOAD_CREDENTIALS_IN_QUERY = E(
    "upload_credentials_in_query",
    "invalid",
    "An upload's 'sellerkey' and 'type' go in the query string "
    "(/api/seller/?sellerkey=...&type=upload); the multipart body carries the file and the other "
    "fields.",
    "A multipart body carried a file while the query string named no operation: an upload's "
    "`type` and `sellerkey` are read from the query string, before the body.",
)
MISSING_SELLER_KEY = E(
    "missing_seller_key", "unauthorized", "No seller key specified.", "No `sellerkey` was given."
)
INVALID_SELLER_KEY = E(
    "invalid_seller_key",
    "unauthorized",
    "Invalid seller key: a seller key is 32 lowercase hex characters.",
    "The `sellerkey` is not 32 lowercase hexadecimal characters.",
)
UNKNOWN_SELLER_KEY = E(
    "unknown_seller_key",
    "unauthorized",
    "No application with this seller key was found.",
    "No application has this seller key (or the reseller account it acted as was deleted).",
)
ACCOUNT_DISABLED = E(
    "account_disabled",
    "forbidden",
    "The account owning this application is disabled.",
    "The application's owner, or the team account a seller key acts as, is disabled.",
)
ACCOUNT_NOT_IN_TEAM = E(
    "account_not_in_team",
    "forbidden",
    "The team account this seller key acts as is not on this application's team.",
    "A seller key acts as a team account that has left the application's team.",
)
PERMISSION_DENIED = E(
    "permission_denied",
    "forbidden",
    "{who} may not use '{operation}': it lacks the '{area}' permission.",
    "The seller key (or the manager it acts as) lacks the operation's permission area.",
)
BEYOND_OWN_AREAS = E(
    "beyond_own_areas",
    "forbidden",
    "The caller cannot {action}: that needs the areas {areas}, which it does not hold itself.",
    "A seller key or team member tried to give more than it holds: a seller key with areas it "
    "lacks, a manager with such areas (or a reseller, whose areas are `licenses` and `users`), a "
    "seller key, password or e-mail change for a team account that holds such areas, or to revoke "
    "a seller key with such areas.",
)
CANNOT_DELETE_OWN_KEY = E(
    "cannot_delete_own_key",
    "conflict",
    "A seller key cannot delete itself; use another key.",
    "A seller key tried to delete itself.",
)
SELLER_KEY_NOT_FOUND = E(
    "seller_key_not_found",
    "not_found",
    "No seller key with this id exists for this application.",
    "No seller key of this application has this id.",
)
INVALID_PERMISSIONS = E(
    "invalid_permissions",
    "invalid",
    "Unknown permission area '{name}'; known: {known}.",
    "Permissions name an unknown area, are an out-of-range bitmask, or give a manager an area only "
    "the owner has.",
)
INVALID_ROLE = E(
    "invalid_role",
    "invalid",
    "The role must be Reseller or Manager.",
    "A team role is not Reseller or Manager.",
)
INVALID_LEVELS = E(
    "invalid_levels",
    "invalid",
    "At most {maximum} key levels can be listed.",
    "A reseller's key levels are too many, too long or contain control characters.",
)
ACCOUNT_EXISTS = E(
    "account_exists",
    "conflict",
    "The username '{username}' is already taken.",
    "A team account with this username already exists.",
)
ACCOUNT_NOT_FOUND = E(
    "account_not_found",
    "not_found",
    "No team account named '{username}' belongs to this application.",
    "No team account of this application has this username.",
)
RESELLER_NOT_FOUND = E(
    "reseller_not_found",
    "not_found",
    "No reseller named '{username}' belongs to this application.",
    "No reseller of this application has this username.",
)
MANAGER_NOT_FOUND = E(
    "manager_not_found",
    "not_found",
    "No manager named '{username}' belongs to this application.",
    "No manager of this application has this username.",
)
INSUFFICIENT_BALANCE = E(
    "insufficient_balance",
    "forbidden",
    "Insufficient balance: this needs {units} '{bucket}' unit(s) and the reseller '{reseller}' has {left}.",
    "A reseller's balance does not pay for what it asked for.",
)
BALANCE_WOULD_GO_NEGATIVE = E(
    "insufficient_balance",
    "conflict",
    "Insufficient balance: this would leave {buckets}; nothing was changed.",
    "A change of a reseller's balance would leave a bucket below zero.",
)
BALANCE_TOO_LARGE = E(
    "balance_too_large",
    "conflict",
    "A balance bucket cannot exceed {maximum}; nothing was changed.",
    "A change of a reseller's balance would take a bucket over its maximum.",
)
BALANCE_BUSY = E(
    "balance_busy",
    "conflict",
    "The balance kept changing; try again.",
    "A reseller's balance changed under several attempts at once; retrying succeeds.",
)
DURATION_NOT_SOLD = E(
    "duration_not_sold",
    "invalid",
    "A reseller can only give durations its balance pays for: 1, 7, 30, 90, 180 or 365 days, or "
    "lifetime ({lifetime_days} days or more).",
    "A reseller asked for a duration no balance bucket pays for.",
)
LEVEL_NOT_ALLOWED = E(
    "level_not_allowed",
    "forbidden",
    "The reseller '{reseller}' may not give level '{level}' (allowed: {allowed}).",
    "A reseller asked for a key level it may not give.",
)

# --- applications and their settings -------------------------------------------------------------

INVALID_NAME = E(
    "invalid_name",
    "invalid",
    "The {what} must not contain control characters.",
    "A name (of an application, account, file or chat channel) is empty, too long or contains "
    "control characters.",
)
APP_EXISTS = E(
    "app_exists",
    "conflict",
    "The account '{owner}' already has an application named '{name}'.",
    "The account already has an application of this name.",
)
NOT_A_SELLER = E(
    "not_a_seller",
    "conflict",
    "The account '{owner}' is a {role}, not a seller.",
    "Applications can only be made for a seller account.",
)
APP_NOT_FOUND = E(
    "app_not_found",
    "not_found",
    "This application no longer exists.",
    "The application was deleted meanwhile.",
)
INVALID_SETTING = E(
    "invalid_setting",
    "invalid",
    "The {label} setting must be 1 or 0.",
    "A setting's value is not of its type or not one of its choices.",
)
INVALID_URL = E(
    "invalid_url",
    "invalid",
    "The {what} must be an absolute http:// or https:// URL.",
    "A URL is malformed, too long, or not an absolute http(s) URL.",
)
INVALID_MESSAGE = E(
    "invalid_message",
    "invalid",
    "A message must not contain control characters.",
    "A custom message is too long or contains control characters.",
)
UNKNOWN_MESSAGE = E(
    "unknown_message",
    "invalid",
    "Unknown message '{name}'; known: {known}.",
    "No custom message has this name.",
)
INVALID_HASH = E(
    "invalid_hash",
    "invalid",
    "A program hash is 1 to {maximum} letters and digits (an MD5 or SHA-256 in hex, say).",
    "A program hash is not 1 to 128 letters and digits.",
)
HASH_EXISTS = E(
    "hash_exists", "conflict", "This program hash is already accepted.", "The hash is already accepted."
)
HASH_NOT_FOUND = E(
    "hash_not_found",
    "not_found",
    "This application does not accept that program hash.",
    "The application does not accept this hash.",
)
TOO_MANY_HASHES = E(
    "too_many_hashes",
    "conflict",
    "This application already accepts {maximum} program hashes; delete some first.",
    "The application accepts as many program hashes as it may.",
)
ALREADY_PAUSED = E(
    "already_paused",
    "conflict",
    "The application is already paused.",
    "The application or subscription is already paused.",
)
NOT_PAUSED = E(
    "not_paused",
    "conflict",
    "The application is not paused.",
    "The application, subscription or user's subscription is not paused.",
)

# --- users and their accounts ------------------------------------------------------------------

USER_NOT_FOUND = E(
    "user_not_found",
    "not_found",
    "No user named '{username}' exists.",
    "No user of this application has this name (in the client API: an Upgrade Access for a "
    "username that does not exist, with the application's `usernamenotfound` message).",
)
USER_EXISTS = E(
    "user_exists",
    "conflict",
    "A user named '{username}' already exists.",
    "A user with this name already exists.",
)
INVALID_USERNAME = E(
    "invalid_username",
    "invalid",
    "A username must not contain control characters.",
    "A username contains control characters.",
)
USERNAME_INVISIBLE_CHARACTER = E(
    "username_invisible_character",
    "invalid",
    "A username must not contain invisible or text-direction characters (found {codepoint}).",
    "A username holds a character that shows nothing of its own: a zero-width or other format "
    "character, a bidi control, an invisible filler or selector, or an unassigned code point.",
)
USERNAME_MIXED_SCRIPTS = E(
    "username_mixed_scripts",
    "invalid",
    "A username must not mix {scripts} letters (they look alike).",
    "A username mixes letters of Latin, Cyrillic and Greek, whose look-alikes impersonate names.",
)
USERNAMES_DIFFER_ONLY_IN_CASE = E(
    "usernames_differ_only_in_case",
    "conflict",
    "Usernames cannot compare case-insensitively while names differ only in case: {names}. "
    "Rename or delete one of each first.",
    "`updatesettings caseinsensitiveusernames=1` while two users' names differ only in case (or "
    "in compatibility forms).",
)
USERNAME_NOT_ALLOWED = E(
    "username_not_allowed",
    "invalid",
    "'{name}' cannot be a username: it addresses every user in bulk operations.",
    "The username is one that bulk operations use to mean every user (`all`).",
)
USERNAME_TOO_SHORT = E(
    "username_too_short",
    "invalid",
    APP_MESSAGES["unTooShort"],
    _app("unTooShort", "Register: the username is shorter than the application allows."),
)
USERNAME_TOO_LONG = E(
    "username_too_long",
    "invalid",
    "A username must be at most {maximum} characters.",
    "The username is longer than allowed.",
)
USERNAME_TAKEN = E(
    "username_taken",
    "conflict",
    APP_MESSAGES["usernametaken"],
    _app("usernametaken", "Client API: another user already has this username."),
)
INVALID_EMAIL = E(
    "invalid_email", "invalid", "'{email}' is not an email address.", "The e-mail address is malformed."
)
INVALID_EXPIRY = E(
    "invalid_expiry",
    "invalid",
    "The expiry must be a positive number of days.",
    "An expiry is not a positive number of days.",
)
USER_NOT_BANNED = E(
    "user_not_banned",
    "conflict",
    "The user '{username}' is not banned.",
    "Unban of a user who is not banned.",
)
PASSWORD_NOT_SET = E(
    "password_not_set",
    "forbidden",
    "The user '{username}' has no password yet (their next login sets it).",
    "The user has no password to check yet.",
)
PASSWORD_MISMATCH = E(
    "password_mismatch", "forbidden", "The password does not match.", "The password given does not match."
)
NOTHING_TO_PAUSE = E(
    "nothing_to_pause",
    "conflict",
    "The user '{username}' has no running subscription to pause.",
    "The user has no running subscription to pause.",
)
GRANT_NOT_FOUND = E(
    "grant_not_found",
    "not_found",
    "The user '{username}' does not hold the subscription '{sub}'.",
    "The user does not hold this subscription (or has no time left on it).",
)
NO_USERS = E(
    "no_users",
    "not_found",
    "The application has no users to set the variable for.",
    "A variable for every user was set on an application without users.",
)

# --- client logins ---------------------------------------------------------------------------

INVALID_CREDENTIALS = E(
    "invalid_credentials",
    "forbidden",
    APP_MESSAGES["invalidcredentials"],
    _app(
        "invalidcredentials",
        "Login: the username is unknown or the password is wrong (one answer for both, so logins "
        "cannot probe for names).",
    ),
)
USER_BANNED = E(
    "user_banned",
    "forbidden",
    APP_MESSAGES["userbanned"],
    _app("userbanned", "The user is banned; `{reason}` is the ban's reason."),
)
BLACKLISTED = E(
    "blacklisted",
    "forbidden",
    APP_MESSAGES["hwidblacked"],
    _app("hwidblacked", "The caller's HWID or IP address is blacklisted."),
)
HWID_REQUIRED = E(
    "hwid_required",
    "forbidden",
    APP_MESSAGES["hwidrequired"],
    _app("hwidrequired", "The application requires a HWID and none was sent."),
)
HWID_TOO_SHORT = E(
    "hwid_too_short",
    "invalid",
    APP_MESSAGES["hwidtooshort"],
    _app("hwidtooshort", "The HWID is shorter than the application's minimum."),
)
HWID_MISMATCH = E(
    "hwid_mismatch",
    "forbidden",
    APP_MESSAGES["hwidmismatch"],
    "The HWID is not one of the user's and no more may be bound. The message is the application's "
    "`hwidmismatch` message (`hwidlimit` when the user holds no HWID yet).",
)
OTP_REQUIRED = E(
    "otp_required",
    "forbidden",
    APP_MESSAGES["otprequired"],
    _app("otprequired", "The account has two-factor authentication on and no `code` was sent."),
)
OTP_INVALID = E(
    "otp_invalid",
    "forbidden",
    APP_MESSAGES["otpinvalid"],
    _app("otpinvalid", "The two-factor code is wrong, expired or already used."),
)
OTP_ALREADY_ENABLED = E(
    "otp_already_enabled",
    "conflict",
    "Two-factor authentication is already enabled on this account.",
    "Two-factor authentication is already on.",
)
OTP_NOT_ENABLED = E(
    "otp_not_enabled",
    "conflict",
    "Two-factor authentication is not enabled on this account.",
    "Two-factor authentication is off.",
)
OTP_NOT_PENDING = E(
    "otp_not_pending",
    "conflict",
    "No two-factor enrolment is waiting for a code (or it expired); start again without a code.",
    "A code was sent to confirm an enrolment that was never started or has expired.",
)
SUBSCRIPTION_PAUSED = E(
    "subscription_paused",
    "forbidden",
    APP_MESSAGES["pausedsub"],
    _app("pausedsub", "Every subscription the user holds is paused."),
)
NO_ACTIVE_SUBSCRIPTION = E(
    "no_active_subscription",
    "forbidden",
    APP_MESSAGES["noactivesubs"],
    _app("noactivesubs", "The user has no subscription with time left."),
)
EMAIL_NOT_CONFIGURED = E(
    "email_not_configured",
    "forbidden",
    "Password reset by e-mail is not set up on this server.",
    "Forgot Password: the server has no SMTP server configured.",
)
INVALID_RESET_TOKEN = E(
    "invalid_reset_token",
    "forbidden",
    "This link has expired or was already used.",
    "The password-reset link has expired or was already used.",
)
INVALID_PASSWORD = E(
    "invalid_password",
    "invalid",
    "The new password must be 1 to {maximum} characters.",
    "The new password on the reset page is empty or too long, or a dashboard password is shorter "
    "than 8 or longer than 256 characters, or is the username.",
)

# --- license keys ------------------------------------------------------------------------------

KEY_NOT_FOUND = E(
    "key_not_found",
    "not_found",
    "No license key '{key}' exists.",
    "No license key of this application is this one (in the client API, with the application's "
    "`keynotfound` message).",
)
KEY_USED = E(
    "key_used",
    "forbidden",
    APP_MESSAGES["keyused"],
    _app("keyused", "The license key has already been used (a concurrent first use may have won)."),
)
KEY_BANNED = E(
    "key_banned",
    "forbidden",
    APP_MESSAGES["keybanned"],
    _app("keybanned", "The license key is banned; `{reason}` is the ban's reason."),
)
NO_SUBSCRIPTION_FOR_LEVEL = E(
    "no_subscription_for_level",
    "forbidden",
    APP_MESSAGES["nosublevel"],
    _app("nosublevel", "No subscription has the key's level, so it grants nothing."),
)
LEVEL_HAS_NO_SUBSCRIPTION = E(
    "level_has_no_subscription",
    "not_found",
    "No subscription has level '{level}', the level of this key.",
    "No subscription has the level asked for, so a key of that level could never be redeemed.",
)
KEY_EXISTS = E(
    "key_exists",
    "conflict",
    "The license key '{key}' already exists.",
    "A key with this text already exists.",
)
KEY_SPACE_EXHAUSTED = E(
    "key_space_exhausted",
    "conflict",
    "Could not make a key that does not exist yet; use a mask with more '*'.",
    "The mask leaves too few free keys to make a new one.",
)
KEY_ALREADY_USED = E(
    "key_already_used",
    "conflict",
    "The license key '{key}' has already been used; its grants were made with its old level.",
    "The level of a key that was already redeemed cannot change.",
)
KEY_USED_DURATION = E(
    "key_used_duration",
    "conflict",
    "The license key '{key}' has already been used; add time to it instead of changing its duration.",
    "The duration of a key that was already redeemed cannot be set (its grants run already).",
)
DURATION_PAID = E(
    "duration_paid",
    "forbidden",
    "A reseller cannot change a key's duration: its balance paid for the duration the key was made "
    "with. Add time to it instead.",
    "A reseller asked to set a key's duration.",
)
KEY_NOT_BANNED = E(
    "key_not_banned",
    "conflict",
    "The license key '{key}' is not banned.",
    "Unban of a key that is not banned.",
)
INVALID_MASK = E(
    "invalid_mask",
    "invalid",
    "The mask must not contain white space, control characters or commas.",
    "A key mask is empty, too long, or contains white space, control characters or commas.",
)
CUSTOM_KEY_AMOUNT = E(
    "custom_key_amount",
    "invalid",
    "A mask without '*' is one fixed key, so it can only be generated with amount 1.",
    "A mask without `*` was asked for more than once.",
)
TOO_MANY_KEYS = E(
    "too_many_keys",
    "invalid",
    "At most {maximum} keys can be deleted at a time.",
    "More keys were named than one call may delete.",
)

# --- subscriptions -----------------------------------------------------------------------------

SUBSCRIPTION_NOT_FOUND = E(
    "subscription_not_found",
    "not_found",
    "No subscription named '{name}' exists.",
    "No subscription of this application has this name.",
)
SUBSCRIPTION_EXISTS = E(
    "subscription_exists",
    "conflict",
    "A subscription named '{name}' already exists.",
    "A subscription with this name already exists.",
)

# --- entitlements ------------------------------------------------------------------------------

ENTITLEMENT_NOT_FOUND = E(
    "entitlement_not_found",
    "not_found",
    "No entitlement with the code '{code}' exists.",
    "No entitlement of this application has this code.",
)
ENTITLEMENT_EXISTS = E(
    "entitlement_exists",
    "conflict",
    "An entitlement with the code '{code}' already exists.",
    "An entitlement with this code already exists in the application.",
)
INVALID_ENTITLEMENT_CODE = E(
    "invalid_entitlement_code",
    "invalid",
    "An entitlement code is 1 to 64 letters, digits, '.', '_', ':' or '-'.",
    "The entitlement code has characters other than ASCII letters, digits, `.`, `_`, `:` and `-`.",
)
INVALID_METADATA = E(
    "invalid_metadata",
    "invalid",
    "Metadata must be a JSON object of at most {maximum} bytes.",
    "An entitlement's `metadata` is not a JSON object, or is longer than 16 KB.",
)
ENTITLEMENT_TARGET = E(
    "entitlement_target",
    "invalid",
    "Name exactly one of 'sub', 'key' or 'user'.",
    "Attach or detach named none, or more than one, of a subscription, a key and a user.",
)

# --- license files -----------------------------------------------------------------------------

LICENSE_FILE_COOLDOWN = E(
    "license_file_cooldown",
    "rate_limited",
    "A license file was issued to this user recently; try again in {remaining} seconds.",
    "Get License File: the user's previous file is younger than the application's license-file "
    "cooldown (`setlicensefiles`, default `LICENSEGATE_LICENSE_FILE_COOLDOWN`); 429 with "
    "`Retry-After` on every dialect (KeyAuth's too, as for every rate limit).",
)
LICENSE_FILE_NEEDS_KEY = E(
    "license_file_needs_key",
    "invalid",
    "An encrypted license file needs a license key the user redeemed and the machine's HWID.",
    "An encrypted license file was asked for a user who redeemed no key, or without an HWID.",
)
LICENSE_FILE_NO_USER = E(
    "license_file_no_user",
    "invalid",
    "The key '{key}' has not been redeemed: a license file is issued for its user.",
    "Issue License File named a key nobody has redeemed yet.",
)
INVALID_LICENSE_FILE_TTL = E(
    "invalid_license_file_ttl",
    "invalid",
    "A license file's validity is at least 3600 seconds (one hour).",
    "`setlicensefiles` was given a `ttl` under one hour.",
)

# --- variables ---------------------------------------------------------------------------------

VARIABLE_NOT_FOUND = E(
    "variable_not_found",
    "not_found",
    "No global variable named '{name}' exists.",
    "No variable (global, or the user's) has this name.",
)
VARIABLE_EXISTS = E(
    "variable_exists",
    "conflict",
    "A global variable named '{name}' already exists.",
    "A global variable with this name already exists.",
)
VARIABLE_READ_ONLY = E(
    "variable_read_only",
    "forbidden",
    "The variable '{name}' is read-only: only the application's owner can change it.",
    "Client API: the user's variable is read-only.",
)

# --- files -------------------------------------------------------------------------------------

FILE_NOT_FOUND = E(
    "file_not_found", "not_found", "No file with id '{file_id}' exists.", "No file has this id."
)
FILE_TOO_LARGE = E(
    "file_too_large",
    "invalid",
    "The file is larger than the limit of {limit}.",
    "An upload, or a file fetched by URL, is larger than the server's upload limit.",
)
FILE_TOO_LARGE_TO_SEND = E(
    "file_too_large",
    "forbidden",
    "{what} is larger than the {limit} the client API sends (as hexadecimal text, twice the "
    "file's size). Please ask the application's developer for another way to get it.",
    "Download File: the file is larger than the server's `client_file_bytes` setting.",
)
FILE_UNAVAILABLE = E(
    "file_unavailable",
    "forbidden",
    "This file cannot be downloaded right now. Please tell the application's developer.",
    "Download File: the file's stored content is missing. A file whose URL cannot be fetched is "
    "answered the same way but with the fetch's own code (`url_fetch_failed` or an outbound "
    "request's code), never naming the URL.",
)
URL_FETCH_FAILED = E(
    "url_fetch_failed",
    "invalid",
    "The file cannot be fetched: the URL answered with HTTP status {status}.",
    "A file's URL answered with a status other than 2xx.",
)

# --- outbound requests (a file's URL, a webhook's base URL): raised by `outbound`, answered by the
# seller API as 400 with the message "... cannot be fetched: <reason>", and by the client API's
# Download File as 403 with `file_unavailable`'s message and the code below.


def _outbound(when: str) -> str:
    return f"Outbound request: {when} (Download File answers 403 with this code, naming no host)."


UNSUPPORTED_SCHEME = E(
    "unsupported_scheme",
    "invalid",
    "Only http:// and https:// URLs can be requested.",
    _outbound("the URL is not http(s)"),
)
TARGET_NOT_ALLOWED = E(
    "target_not_allowed",
    "invalid",
    "Requests to {where} are not allowed: it leads to {address}, a {reason} address (an operator "
    "may allow it with LICENSEGATE_OUTBOUND_ALLOW).",
    _outbound("the host is or resolves to an internal address the operator has not allowed"),
)
HOST_NOT_FOUND = E(
    "host_not_found",
    "invalid",
    "The host name '{host}' cannot be resolved.",
    _outbound("the host name does not resolve"),
)
TIMEOUT = E(
    "timeout",
    "invalid",
    "'{host}' did not answer within {seconds} seconds.",
    _outbound("no answer within the time limit"),
)
TOO_MANY_REDIRECTS = E(
    "too_many_redirects",
    "invalid",
    "'{host}' redirected more than {maximum} times.",
    _outbound("too many redirects"),
)
CONNECTION_FAILED = E(
    "connection_failed",
    "invalid",
    "Could not connect to '{host}': {reason}",
    _outbound("the connection failed or was cut short"),
)
INVALID_RESPONSE = E(
    "invalid_response",
    "invalid",
    "The reply from '{host}' cannot be decoded.",
    _outbound("the reply, or a redirect, cannot be read"),
)
RESPONSE_TOO_LARGE = E(
    "response_too_large",
    "invalid",
    "The reply from '{host}' is larger than the limit of {max_bytes} bytes.",
    _outbound("the reply is larger than the limit"),
)

# --- webhooks ----------------------------------------------------------------------------------

WEBHOOK_NOT_FOUND = E(
    "webhook_not_found", "not_found", "No webhook with id '{webid}' exists.", "No webhook has this id."
)
WEBHOOK_EXISTS = E(
    "webhook_exists",
    "conflict",
    "A webhook with id '{webid}' already exists.",
    "A webhook with this id exists.",
)
EVENT_ENDPOINT_NOT_FOUND = E(
    "event_endpoint_not_found",
    "not_found",
    "No event webhook with id '{endpoint}' exists.",
    "No event webhook endpoint of this application has this id.",
)
UNKNOWN_EVENT = E(
    "unknown_event",
    "invalid",
    "Unknown event '{name}'.",
    "An event name is not in the catalogue of `docs/events.md`.",
)
EVENT_NOT_FOUND = E(
    "event_not_found",
    "not_found",
    "No event with id '{event}' exists.",
    "No event of this application has this id (or it is older than the delivery log keeps).",
)
TOO_MANY_EVENT_ENDPOINTS = E(
    "too_many_event_endpoints",
    "conflict",
    "An application may have at most {limit} event webhooks.",
    "The application has as many event webhook endpoints as it may.",
)
INVALID_WEBID = E(
    "invalid_webid",
    "invalid",
    "A webhook id is 1 to {maximum} letters, digits, '_' or '-'.",
    "A webhook id is not 1 to 32 letters, digits, `_` or `-`.",
)
INVALID_USER_AGENT = E(
    "invalid_user_agent",
    "invalid",
    "The user agent must not contain control characters.",
    "A webhook's user agent contains control characters.",
)
INVALID_CONTENT_TYPE = E(
    "invalid_content_type",
    "invalid",
    "The content type must be printable ASCII (no line breaks or control characters).",
    "Webhook: `conttype` is not printable ASCII.",
)
PARAM_FIXED = E(
    "param_fixed",
    "invalid",
    "The parameter '{name}' is fixed by this webhook and cannot be sent.",
    "Webhook: `params` sets a name the webhook's base URL already sets.",
)
TOO_MANY_PARAMS = E(
    "too_many_params",
    "invalid",
    "The params hold more than {maximum} parameters.",
    "Webhook: `params` holds too many parameters.",
)
WEBHOOK_DISABLED = E(
    "webhook_disabled",
    "forbidden",
    "This webhook is disabled until the application's developer enters its full URL again.",
    "Webhook: the webhook is disabled (imported from KeyAuth without its full URL) until its URL "
    "is entered again.",
)
WEBHOOK_REFUSED = E(
    "webhook_refused",
    "forbidden",
    "This webhook's target is not allowed by the server; ask the application's developer.",
    "Webhook: the stored base URL cannot be used or its target is not allowed.",
)
WEBHOOK_TIMEOUT = E(
    "webhook_timeout",
    "forbidden",
    "The webhook's target did not answer in time.",
    "Webhook: no reply within the time limit.",
)
WEBHOOK_RESPONSE_TOO_LARGE = E(
    "webhook_response_too_large",
    "forbidden",
    "The webhook's reply is larger than the server accepts.",
    "Webhook: the reply is larger than the limit.",
)
WEBHOOK_FAILED = E(
    "webhook_failed",
    "forbidden",
    "The webhook's target could not be reached or did not answer properly.",
    "Webhook: the name does not resolve, the connection failed, too many redirects, or the reply "
    "cannot be read.",
)

# --- chat --------------------------------------------------------------------------------------

CHANNEL_NOT_FOUND = E(
    "channel_not_found",
    "not_found",
    "No chat channel named '{name}' exists.",
    "No chat channel has this name.",
)
CHANNEL_EXISTS = E(
    "channel_exists",
    "conflict",
    "A chat channel named '{name}' already exists.",
    "A chat channel with this name already exists.",
)
EMPTY_MESSAGE = E(
    "empty_message", "invalid", "The message is empty.", "A chat message is empty or only white space."
)
MESSAGE_TOO_LONG = E(
    "message_too_long",
    "invalid",
    "The message is longer than {maximum} characters.",
    "A chat message is longer than allowed.",
)
USER_MUTED = E(
    "user_muted",
    "forbidden",
    "You are muted in this application's chat until {until} (Unix time).",
    "The user is muted in the chat.",
)
CHAT_MESSAGE_NOT_FOUND = E(
    "chat_message_not_found",
    "not_found",
    "No chat message with the id {id} exists.",
    "No chat message of the application has this id (deleted, pruned, or never posted).",
)
NOT_MUTED = E(
    "not_muted", "conflict", "The user '{username}' is not muted.", "Unmute of a user who is not muted."
)

# --- blacklists and logs -----------------------------------------------------------------------

INVALID_IP = E(
    "invalid_ip",
    "invalid",
    "'{text}' is not an IPv4 or IPv6 address.",
    "An address is not IPv4 or IPv6 (or, where ranges are accepted, a CIDR range).",
)
INVALID_BLACKLIST_TYPE = E(
    "invalid_blacklist_type",
    "invalid",
    "The blacklist type must be 'ip' or 'hwid'.",
    "A blacklist type is not `ip` or `hwid`.",
)
BLACKLIST_NOT_FOUND = E(
    "blacklist_not_found",
    "not_found",
    "No {type} blacklist entry '{value}' exists.",
    "No blacklist entry has this value.",
)
WHITELIST_NOT_FOUND = E(
    "whitelist_not_found",
    "not_found",
    "'{value}' is not whitelisted.",
    "No whitelist entry has this address.",
)
INVALID_TIME_RANGE = E(
    "invalid_time_range",
    "invalid",
    "'from' must not be later than 'to'.",
    "A time range ends before it starts.",
)

# --- the dashboard: signing in, second factors, lists --------------------------------------------

SIGNIN_FAILED = E(
    "signin_failed",
    "unauthorized",
    "Wrong username or password.",
    "Dashboard sign-in: the username or password is wrong, or the account cannot sign in (one "
    "message for every reason).",
)
WRONG_PASSWORD = E(
    "wrong_password",
    "unauthorized",
    "The password is wrong.",
    "A dashboard change that asks for the password again was given another one.",
)
WRONG_CODE = E(
    "wrong_code",
    "invalid",
    "That code is not right, or was used already.",
    "A second-factor code (authenticator app or recovery code) is wrong or was used before.",
)
TOTP_EXPIRED = E(
    "totp_expired",
    "conflict",
    "Start again: the set-up of the authenticator app has expired.",
    "The authenticator app's set-up was not confirmed in time, or was started again elsewhere.",
)
CHALLENGE_EXPIRED = E(
    "challenge_expired",
    "conflict",
    "The security key prompt expired; try again.",
    "A security key answered a challenge that expired or was answered already.",
)
INVALID_CREDENTIAL = E(
    "invalid_credential",
    "invalid",
    "The security key's answer is not readable.",
    "A security key's answer (WebAuthn) is malformed, too large or fails verification.",
)
PASSKEY_EXISTS = E(
    "passkey_exists", "conflict", "This security key is registered already.", "The key is registered already."
)
PASSKEY_NOT_FOUND = E(
    "passkey_not_found", "not_found", "No such security key.", "The account has no such security key."
)
SETUP_LINK_INVALID = E(
    "setup_link_invalid",
    "forbidden",
    "This setup link has expired or was used already. Run `licensegate serve` again for a new one.",
    "The first-run setup link has expired or made its account already.",
)
INVITATION_INVALID = E(
    "invitation_invalid",
    "forbidden",
    "This invitation link has expired, was used already or was replaced by a newer one. Ask the "
    "application's owner for a new one.",
    "A team account's invitation link is not live (expired, used or replaced).",
)
NAME_MISMATCH = E(
    "name_mismatch",
    "invalid",
    "Type the application's name exactly to delete it; nothing was deleted.",
    "Deleting an application in the dashboard: the name typed to confirm is not its name.",
)
INVALID_VIEW = E(
    "invalid_view",
    "invalid",
    "This list cannot be shown that way.",
    "A dashboard list's filter, sort, page size or page link in the address is not one it offers.",
)
KEYAUTH_IMPORT_NOT_FOUND = E(
    "keyauth_import_not_found",
    "not_found",
    "There is no such import.",
    "A dashboard import from KeyAuth that does not exist or was started by another account.",
)
INVALID_FORM = E(
    "invalid_form",
    "invalid",
    "The form could not be read.",
    "A dashboard form is not URL-encoded or multipart, is malformed or has too many fields.",
)

# --- seats -------------------------------------------------------------------------------------

SEAT_LIMIT = E(
    "seat_limit",
    "forbidden",
    APP_MESSAGES["seatlimit"],
    _app(
        "seatlimit",
        "A login over the seat rule's machine or session limit, where the rule refuses (or allows "
        "N% over and that is spent too).",
    ),
)
SEAT_TARGET = E(
    "seat_target",
    "invalid",
    "Name exactly one of 'sub', 'key' or 'user'.",
    "A seats operation names none or several of a subscription, a key and a user.",
)
SEAT_RULE_EMPTY = E(
    "seat_rule_empty",
    "invalid",
    "A seat rule needs 'machines', 'sessions' or both.",
    "`setseats` without a machine or session limit.",
)
SEAT_RULE_NOT_FOUND = E(
    "seat_rule_not_found",
    "not_found",
    "No seat rule is set on {target}.",
    "`getseats` or `delseats` of a subscription, key or user without a rule.",
)


# --- usage credits -----------------------------------------------------------------------------

CREDITS_EXHAUSTED = E(
    "credits_exhausted",
    "forbidden",
    APP_MESSAGES["nocredits"],
    _app(
        "nocredits",
        "The balance holds fewer credits than the call's cost (nothing is spent); `{balance}` is "
        "what is left.",
    ),
)
NO_CREDITS = E(
    "no_credits",
    "forbidden",
    "This user has no credit balance.",
    "`spend` by a user for whom (and for whose key) the seller set no credit balance.",
)
CREDITS_NOT_SET = E(
    "credits_not_set",
    "not_found",
    "No credit balance is set for {target}.",
    "The seller asked for, added to or set the refill of a balance never set (set it with `setcredits`).",
)
CREDIT_TARGET = E(
    "credit_target",
    "invalid",
    "Name exactly one of 'user' or 'key'.",
    "A credits operation names neither or both of a user and a key.",
)
INVALID_REFILL = E(
    "invalid_refill",
    "invalid",
    "A refill needs an amount of at least 1, a period (day, week or month) and a time HH:MM (UTC).",
    "`refillcredits` with a period but no amount, or a time that is not HH:MM.",
)
CREDITS_OUT_OF_RANGE = E(
    "credits_out_of_range",
    "invalid",
    "A balance must stay between 0 and {maximum}.",
    "`addcredits` would take the balance below 0 or above the maximum.",
)


# --- throttling and faults ---------------------------------------------------------------------

NAMED_LIMIT_EXCEEDED = E(
    "named_limit_exceeded",
    "rate_limited",
    "Too many requests for this {owner} (limit '{name}'); try again later.",
    "A client call over a named rate limit the seller set on the session's user or key (429 with "
    "`Retry-After`; `limit` names it). The call was not counted by any limit.",
)
NAMED_LIMIT_TARGET = E(
    "named_limit_target",
    "invalid",
    "Name exactly one of 'user' or 'key' for the rate limit.",
    "A rate limit operation (`setratelimit`, `listratelimits`, `delratelimit`) names neither or both "
    "of a user and a key.",
)
NAMED_LIMIT_NOT_FOUND = E(
    "named_limit_not_found",
    "not_found",
    "No rate limit named '{name}' is set on this {owner}.",
    "`delratelimit` names a limit the user or key does not have.",
)
RATE_LIMITED = E(
    "rate_limited",
    "rate_limited",
    "Too many requests; try again later.",
    "Too many requests: the `Retry-After` header says when to retry (403 where the operation lists "
    "no 429). Raised as `errors.RateLimited(retry_after, message)`.",
)
BUSY = E(
    "busy",
    "rate_limited",
    "Too many passwords are being checked right now; try again in a moment.",
    "Every password-hashing thread is busy and the waiting line (`LICENSEGATE_PASSWORD_QUEUE`) is "
    "full, with the application holding at least its share of it: 429 with `Retry-After` (403 where "
    "the operation lists no 429). Raised as `passwords.Busy`.",
)
SERVICE_UNAVAILABLE = E(
    "service_unavailable",
    "unavailable",
    "The service cannot reach its database right now; try again in a few seconds.",
    "The database did not answer within `LICENSEGATE_PG_TIMEOUT` (PostgreSQL), or is locked, full or "
    "unreadable (SQLite): 503 with `Retry-After`; 500 where the operation lists no 503 (the interface "
    "document's operations), 403 where it lists neither (Webhook). Nothing was changed, unless the "
    "database committed just before it stopped answering.",
)
INTERNAL_ERROR = E(
    "internal_error",
    "internal",
    "An unexpected error occurred; it has been logged with request id {request_id}.",
    "An unexpected fault: the body's `request_id` is in the service's log (403 where the operation "
    "lists no 500). Never a stack trace.",
)


def by_code(code: str, kind: Kind = "invalid") -> ErrorCode:
    """The entry of a code that arrives as data (an outbound request's failure)."""
    for entry in catalogue():
        if entry.code == code and entry.kind == kind:
            return entry
    raise KeyError(f"{code!r} ({kind}) is not in the error catalogue")


def catalogue() -> list[ErrorCode]:
    """Every entry above, in the order declared."""
    return [value for value in globals().values() if isinstance(value, ErrorCode)]


# --- the token system and the web loader ------------------------------------------------------

TOKEN_REQUIRED = E(
    "token_required",
    "forbidden",
    APP_MESSAGES["tokenrequired"],
    _app("tokenrequired", "Token validation is on and `init` sent no `token`."),
)
TOKEN_HASH_REQUIRED = E(
    "token_hash_required",
    "forbidden",
    APP_MESSAGES["thashrequired"],
    _app("thashrequired", "Token validation is on and `init` sent no `thash`."),
)
TOKEN_INVALID = E(
    "token_invalid",
    "forbidden",
    APP_MESSAGES["tokeninvalid"],
    _app("tokeninvalid", "Token validation is on and no token of the application is this one."),
)
TOKEN_BANNED = E(
    "token_banned",
    "forbidden",
    APP_MESSAGES["tokenbanned"],
    _app("tokenbanned", "The token is banned, or the key or user it belongs to is (`{reason}`: why)."),
)
TOKEN_HASH_MISMATCH = E(
    "token_hash_mismatch",
    "forbidden",
    APP_MESSAGES["tokenhashmismatch"],
    _app("tokenhashmismatch", "`thash` differs from the file hash bound at the token's first use."),
)
TOKEN_NOT_FOUND = E(
    "token_not_found",
    "not_found",
    "No token '{token}' exists.",
    "Seller API: no token of this application is this one.",
)
INVALID_BUTTON_VALUE = E(
    "invalid_button_value",
    "invalid",
    "A button's value is 1 to 99 characters without spaces, slashes, '?', '#' or '%'.",
    "A web-loader button's value would not survive the trip to the program's local listener.",
)
BUTTON_EXISTS = E(
    "button_exists",
    "conflict",
    "A button with the value '{value}' exists already.",
    "The application has a web-loader button with this value.",
)
BUTTON_NOT_FOUND = E(
    "button_not_found",
    "not_found",
    "No button with the value '{value}' exists.",
    "The application has no web-loader button with this value.",
)
TOO_MANY_BUTTONS = E(
    "too_many_buttons",
    "conflict",
    "This application has {maximum} buttons already; delete one first.",
    "The application has as many web-loader buttons as it may.",
)
LOADER_TOKEN_INVALID = E(
    "loader_token_invalid",
    "forbidden",
    "This web-loader sign-in is not valid: it expired, was used already or is another user's. "
    "Sign in on the customer panel and start the loader again.",
    "Login with `token` (the web loader): the token is unknown, expired (about two minutes), "
    "already used, its customer-panel session ended, or it was issued to another user.",
)
HWID_RESET_COOLDOWN = E(
    "hwid_reset_cooldown",
    "conflict",
    "Your HWID was reset recently; you can reset it again in {remaining}.",
    "Customer panel: the application's (or the user's own) HWID-reset cooldown has not passed.",
)
