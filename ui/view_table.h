// The main window's views, one row each: its tab, its View menu entry (Alt+1, Alt+2 ... in table
// order), its `--screenshot --view` name and --help line, how the window builds its page, and how
// a screenshot starts the view's work and knows it is finished. The main window, the screenshot
// parser (gui_main) and `weightscope --help` read this table and nothing else; a new view is a row.
#pragma once

#include <QString>
#include <functional>
#include <string>
#include <vector>

class QWidget;

namespace ws::ui {

class MainWindow;

struct ViewSpec {
  QString name;       // --screenshot --view NAME
  QString tabTitle;   // with its mnemonic: "&Experts"
  QString menuTitle;  // "Expert Map"
  // Builds the page once per window (the window owns it). A page that implements CheckpointView
  // is handed every checkpoint the window opens; one with a tensorRequested(uint32_t) signal leads
  // to that tensor in the tree.
  std::function<QWidget*(MainWindow&)> page;
  // --screenshot, once the checkpoint is open and the tab shown: start the view's work and call
  // done() when the view shows finished work.
  std::function<void(MainWindow&, const std::function<void()>& done)> screenshot;
};

// The built-in views, then any added by a ViewRegistration.
const std::vector<ViewSpec>& viewTable();
// Position of a view in the table (its tab index), -1 when there is none by that name.
int viewIndex(const QString& name);
// Every --view name, the comparison window's "diff" last, space-separated (for --help).
std::string screenshotViewNames();

// Adds a view to the table for as long as it lives (windows built meanwhile show it).
class ViewRegistration {
 public:
  explicit ViewRegistration(ViewSpec spec);
  ~ViewRegistration();
  ViewRegistration(const ViewRegistration&) = delete;
  ViewRegistration& operator=(const ViewRegistration&) = delete;

 private:
  QString name_;
};

}  // namespace ws::ui
