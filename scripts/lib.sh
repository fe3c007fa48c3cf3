# Shared by the set-up scripts (sourced, not run): the copy that ships in the package, beside
# the broker image's recipe (kafka_assignors/embedded/recipe/lib.sh).
# shellcheck source=kafka_assignors/embedded/recipe/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../kafka_assignors/embedded/recipe/lib.sh"
