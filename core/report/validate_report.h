// Validation reports: JSON (schema weightscope.validate/1), Markdown for a pull-request comment,
// one self-contained HTML file that opens offline, and JUnit XML with a test case per rule.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/validate/validator.h"

namespace ws {

nlohmann::json validateJson(const val::ValidationReport& r, val::Severity minSeverity);
// One finding as the validate document writes it (inspect lists its opening problems the same way).
nlohmann::json findingJson(const val::Finding& f);
std::string validateMarkdown(const val::ValidationReport& r, val::Severity minSeverity);
std::string validateHtml(const val::ValidationReport& r, val::Severity minSeverity);
std::string validateJunit(const val::ValidationReport& r, val::Severity minSeverity);

// The format a report file's name asks for: "json" (.json), "md" (.md), "html" (.html, .htm) or
// "junit" (.xml); empty for any other name.
std::string validateFormatFor(const std::string& file);
// The report as text in `format` (json, md, html or junit); throws std::invalid_argument otherwise.
std::string validateReportText(const val::ValidationReport& r, val::Severity minSeverity, const std::string& format);

}  // namespace ws
