# Included from runtime/CMakeLists.txt after src/ (needs the smpart target).
# runtime_glue.cpp connects the controller, profiler and trace to libsmpart.
# It needs the runtime API additions (DeviceInfo::sm_ids, deviceInfo(),
# KernelHandle::id(), Progress::finished, LaunchObserver); it is built as
# soon as runtime.hpp declares setLaunchObserver.
if(TARGET smpart)
  file(READ ${PROJECT_SOURCE_DIR}/runtime/include/smpart/runtime.hpp _smpart_runtime_hpp)
  string(FIND "${_smpart_runtime_hpp}" "setLaunchObserver" _has_observer)
  if(_has_observer GREATER -1)
    add_library(smpart_controller_glue STATIC ${CMAKE_CURRENT_LIST_DIR}/runtime_glue.cpp)
    target_link_libraries(smpart_controller_glue PUBLIC smpart smpart_controller
      smpart_profiler Threads::Threads)
  else()
    message(STATUS "smpart_controller_glue: runtime.hpp has no LaunchObserver yet; "
                   "initFromEnvironment() not built")
  endif()
endif()
