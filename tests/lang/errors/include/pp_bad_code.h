// Side file of pp_error_in_included_file.slang: uses a name that does not exist.
float bad() {
    return nowhere_defined + 1.0;
}
