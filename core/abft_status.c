/* abft: status names and messages, generated from ABFT_STATUS_LIST. */
#include "abft/abft_status.h"

const char *abft_status_name(abft_status_t status) {
    switch (status) {
#define ABFT_X_NAME(name, value, msg) \
    case name: return #name;
        ABFT_STATUS_LIST(ABFT_X_NAME)
#undef ABFT_X_NAME
    }
    return "ABFT_STATUS_<unknown>";
}

const char *abft_status_string(abft_status_t status) {
    switch (status) {
#define ABFT_X_MSG(name, value, msg) \
    case name: return msg;
        ABFT_STATUS_LIST(ABFT_X_MSG)
#undef ABFT_X_MSG
    }
    return "unknown status value";
}
